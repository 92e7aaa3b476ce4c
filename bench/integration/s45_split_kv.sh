#!/usr/bin/env bash
# Session 45: split-KV decoding on cuda_sm90 (src/cuda/sm90/split_kv.h): the full build, every CUDA suite of both
# backends (the KV-cache grid gained four split cases; every d128 decode case of few tiles now splits),
# compute-sanitizer memcheck and racecheck on split cases, then s45_decode.py beside SDPA's FA2 and cuDNN.
# Second run (after the first's misaligned records at one packed row and the split count's minimum of four
# blocks): also the dense forward's rows and, under ncu, one small decode's kernel durations.
# Prediction: suites pass, sanitizers clean; batch 1-8 decodes 2-4x faster than session 44's (1.4-2.2 TB/s ->
# 3-4 TB/s over 4096-16384 keys), at or above cuDNN; batch 16 / 64 (no split) unchanged.
# One H200 call (~8 minutes).
#   bash bench/integration/s45_split_kv.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s45k
tests_and_py_build "64;128;256"  # sets tests
timeout 240 "$tests" --gtest_filter='*cuda_sm*:*CudaSm*:*SplitKV*' --gtest_brief=1 >"$out/tests.log" 2>&1
log "CUDA suites rc=$?"
grep -E '^\[  (PASSED|SKIPPED)' "$out/tests.log" | tee -a "$out/summary.txt"
grep -E 'FAILED  \]' "$out/tests.log" | cut -c1-160 | head -40 | tee -a "$out/summary.txt"
grep -E -m5 -B2 -A8 'Failure|error' "$out/tests.log" | cut -c1-300 | head -60 >>"$out/summary.txt"
split_cases='Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_1x2500_*:Grid/KVCacheTest.*cuda_sm90_*_2x1800_*:Grid/KVCacheTest.*cuda_sm90_*_1x1000_*'
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 "$tests" --gtest_brief=1 \
    --gtest_filter="$split_cases" >"$out/$tool.log" 2>&1
  log "$tool rc=$? $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool.log") $(grep -E '^\[  (PASSED|SKIPPED|FAILED)' "$out/$tool.log" | cut -c1-120 | tr '\n' ' ')"
  grep -E -m2 -A6 '^========= (Invalid|Misaligned|Error|Race)' "$out/$tool.log" | cut -c1-200 >>"$out/summary.txt"
done
# Kernel durations of one small decode per shape, ours and cuDNN's (s45_ncu.py), in launch order.
PYTHONPATH=$bld/pyroot timeout 120 ncu --csv --metrics gpu__time_duration.sum python3 bench/integration/s45_ncu.py \
  >"$out/ncu.csv" 2>"$out/ncu.err"
log "ncu rc=$?"
python3 - "$out/ncu.csv" <<'PY' | tee "$out/ncu.jsonl"
import csv, json, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]
for r in rows[1:]:
    d = dict(zip(head, r))
    print(json.dumps({"id": d.get("ID"), "kernel": d.get("Kernel Name", "")[:90], "ns": d.get("Metric Value")}))
PY
PYTHONPATH=$bld/pyroot timeout 200 python3 bench/integration/s45_decode.py 2>&1 | grep -v Warning |
  tee "$out/decode.jsonl"
log "decode rc=$?"
