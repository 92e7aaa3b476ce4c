#!/usr/bin/env bash
# Session 42: the host's time per call. bench/host_calls.cu (each runtime / driver call a launch makes, alone),
# `flashattn run --host-time` over the launch shapes of the sm90 forward (static schedule; dynamic with its
# counter memset; K/V multicast clusters with the occupancy query; placement clusters; varlen with the prepare
# kernel; paged), and bench/python_overhead.py on the sm90 build. Prediction: the C++ path 8-15 us per call, of
# which the cluster occupancy query is the largest single part; Python 35-60 us.
# One H200 call (~4 minutes).
#   bash bench/integration/s42_host.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s42h
nvcc -O2 -std=c++17 -arch=sm_90a bench/host_calls.cu -o "$bld/host_calls" >"$out/host_calls_build.log" 2>&1 &&
  "$bld/host_calls" | tee "$out/host_calls.jsonl"
log "host_calls rc=$?"
test_cli_build "64;128;256" bf16 10 &
PY_DIMS="128" sm90_build_py new "" 6 300 &
wait
rm -f "$out"/*_configure.log
cli=$bld/tests/tools/cli/flashattn
for args in "--head-dim 128 -b 1 --seqlen-q 128 --heads 16" \
  "--head-dim 128 -b 1 --seqlen-q 1024 --heads 16 --causal" \
  "--head-dim 128 -b 1 --seqlen-q 2048 --heads 16" \
  "--head-dim 128 -b 1 --seqlen-q 8192 --heads 16" \
  "--head-dim 256 -b 2 --seqlen-q 1024 --heads 8 --causal" \
  "--head-dim 128 -b 8 --seqlen-q 256 --heads 16 --varlen" \
  "--head-dim 128 -b 8 --seqlen-q 1 --seqlen-k 4096 --heads 32 --heads-kv 8 --paged 256" \
  "--head-dim 128 -b 8 --seqlen-q 1 --seqlen-k 4096 --heads 32 --heads-kv 8"; do
  # shellcheck disable=SC2086  # a list of options
  timeout 60 "$cli" run --backend cuda_sm90 --repeat 5 --verify sample --host-time 100 $args >>"$out/cli.txt" 2>&1
  log "cli [$args] rc=$?"
done
grep -E "^flashattn run|^kernel|^time|^host" "$out/cli.txt" | tee -a "$out/summary.txt"
PYTHONPATH=$bld/pyroot timeout 120 python3 bench/python_overhead.py --calls 1000 2>&1 | grep -v Warning |
  tee "$out/python_overhead.jsonl"
log "python_overhead rc=$?"
