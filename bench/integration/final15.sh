#!/bin/bash
# Session 15, last call: final10a.sh's verification (full build, GPU suites, sanitizers, PTX-JIT backward,
# float64-checked CLI runs + final14a_runs.txt's sm80 runs + two three-consumer d64 runs) on the final tree (the
# kernels are session 14's but for eb22bfc's sm80 OnlineSoftmax refactor, whose bf16 suites s15_first.sh ran:
# this runs fp16 and the CLI runs on it too), then bench/compare.py's grid + decode on it (the standing), with the
# Python extension built beside the verification.
#   bash bench/integration/final15.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
cp src/cuda/CMakeLists.txt /tmp/s15f-cmakelists  # device_call_begin drops the sm80 gencode; final10a.sh builds with it
device_call_begin s15f
tree_copy "$bld/py-tree"
cp /tmp/s15f-cmakelists src/cuda/CMakeLists.txt
(cd "$bld/py-tree" && PY_DIMS="64;128;256" sm90_build_py new "" 6 400) &
printf '%s\n' "--backend cuda_sm90 --head-dim 64 --seqlen-q 8192 -b 2 --heads 8" \
  "--backend cuda_sm90 --head-dim 64 --seqlen-q 9001 --seqlen-k 7777 -b 1 --heads 8 --heads-kv 2 --dtype fp16 --softcap 20" \
  | cat bench/integration/final14a_runs.txt - >/tmp/s15f-runs.txt
trap - EXIT
FINAL_NAME=g15f EXTRA_RUNS=/tmp/s15f-runs.txt bash bench/integration/final10a.sh
wait
cp "$out/summary.txt" "$OUT/py_summary.txt"
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 300 python3 bench/compare.py --modes fwd --rounds 4 \
  --out "$OUT/compare" --tag "$(date +%Y%m%d-%H%M%S)-fwd" >"$OUT/compare_fwd.log" 2>&1
echo "== compare fwd rc=$?" >>"$OUT/summary.txt"
sed -n '/^# /,$p' "$OUT/compare_fwd.log"
