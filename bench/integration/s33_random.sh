#!/usr/bin/env bash
# Session 33: the drawn-case suites (tests/*_test.cpp Random/*: ForwardRandomTest, VarlenRandomTest,
# KVCacheRandomTest; shapes, head dims, GQA, masks, softcap, ALiBi, sink, scale, layout, LSE, paging, seqused,
# appends, rotary, left padding, splits drawn from each run's seed; tests/support/attention_cases.h draw_common)
# on both CUDA backends over several base seeds (40 + 30 + 30 cases per backend and seed when run; 24 + 16 + 16
# since, to keep gpu_check.sh's suites within its time limit) against the float64 reference, then the varlen and
# KV-cache grids, whose bodies moved into functions the Random suites share. The C++ test binary is built
# forward-only for every head-dim bucket the drawn dims reach (64..256, fp16 + bf16; the sm80 kernels for 90a). A
# failure prints its seed and drawn case (SCOPED_TRACE); --gtest_output=xml records every drawn case.
# Prediction: every drawn case passes (the hand-picked grid covers each kernel path; this covers their mixes).
# One H200 call (~6 minutes).
#   bash bench/integration/s33_random.sh
# (DIMS: the head-dim buckets built; SEEDS: the base seeds. Second call: DIMS of every sm80 bucket, 2001-2004,
# after the suites drew odd head dims for the non-Hopper backends.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s33r
test_build . "${DIMS:-64;96;128;192;256}" "fp16;bf16" "" 16
tests=$bld/tests/tests/flashattn_tests
[[ -x $tests ]] || exit 1
for seed in ${SEEDS:-1001 1002 1003 1004 1005 1006}; do
  FLASHATTN_TEST_SEED=$seed timeout 150 "$tests" --gtest_filter='Random/*cuda*' --gtest_brief=1 \
    --gtest_output="xml:$bld/random_$seed.xml" >"$bld/random_$seed.txt" 2>&1
  log "seed $seed rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$bld/random_$seed.txt" | tr '\n' ' ')"
  grep -B2 -A12 "Failure" "$bld/random_$seed.txt" | head -60 >>"$out/summary.txt"
done
# What the seeds drew, one line per case: seed file, test, drawn case.
python3 - "$bld"/random_*.xml >"$out/drawn_cases.txt" <<'PY'
import sys, xml.etree.ElementTree as ET
for path in sys.argv[1:]:
    for case in ET.parse(path).iter("testcase"):
        for prop in case.iter("property"):
            if prop.get("name") == "drawn_case":
                print(path.rsplit("/", 1)[-1], case.get("name"), prop.get("value"))
PY
log "drawn cases: $(wc -l <"$out/drawn_cases.txt")"
timeout 200 "$tests" --gtest_filter='Grid/KVCacheTest.*cuda*:Grid/VarlenTest.*cuda*' --gtest_brief=1 >"$bld/grids.txt" 2>&1
log "kvcache + varlen grids rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$bld/grids.txt" | tr '\n' ' ')"
grep -A12 "Failure" "$bld/grids.txt" | head -40 >>"$out/summary.txt"
cp "$out/drawn_cases.txt" "${OUT:-/tmp}/"
