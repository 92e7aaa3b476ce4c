#!/usr/bin/env bash
# Session 70: a fuzz campaign of the drawn suites (Random/*: forward, varlen, KV-cache and backward cases drawn
# afresh from each run's FLASHATTN_TEST_SEED, tests/support/attention_cases.cpp) on both CUDA backends: four
# workers, each running the whole drawn set again and again with a new seed until the time is up (FUZZ_SECONDS,
# default 330), every failing run's log and seed kept.
#   bash bench/integration/s70_fuzz.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s70f
start=$(date +%s)
cmake -S . -B "$bld/full" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a \
  -DFLASHATTN_HEAD_DIMS="32;64;96;128;160;192;224;256" -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF \
  -DFLASHATTN_BUILD_EXAMPLES=OFF >"$out/configure.log" 2>&1 &&
  timeout 300 cmake --build "$bld/full" -j 16 --target flashattn_tests >"$out/build.log" 2>&1
log "build rc=$? in $(($(date +%s) - start)) s"
tests=$bld/full/tests/flashattn_tests
end=$(($(date +%s) + ${FUZZ_SECONDS:-330}))
worker() {
  local w=$1 i=0 seed rc
  while (($(date +%s) + 60 < end)); do
    seed=$(( (start << 8) + (w << 20) + i ))
    i=$((i + 1))
    FLASHATTN_TEST_SEED=$seed OMP_NUM_THREADS=4 timeout 150 "$tests" --gtest_filter='Random/*cuda*' \
      --gtest_brief=1 >"$out/run_$seed.log" 2>&1
    rc=$?
    echo "$seed rc=$rc $(grep -E '^\[  PASSED' "$out/run_$seed.log" | tr -s ' ')" >>"$out/runs_$w.txt"
    if ((rc == 0)); then rm -f "$out/run_$seed.log"; else cp "$out/run_$seed.log" "${OUT:-/tmp}/"; fi
  done
}
for w in 0 1 2 3; do worker "$w" & done
wait
cat "$out"/runs_*.txt >"$out/runs.txt"
cp "$out/runs.txt" "${OUT:-/tmp}/"
log "runs $(wc -l <"$out/runs.txt"), failed $(grep -vc 'rc=0' "$out/runs.txt"), cases passed $(awk '{s += $6} END {print s}' "$out/runs.txt")"
grep -h -E 'FAILED  \]|drawn case' "${OUT:-/tmp}"/run_*.log 2>/dev/null | sort | uniq | head -40 >>"$out/summary.txt"
log total
