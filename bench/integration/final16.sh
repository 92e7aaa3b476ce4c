#!/bin/bash
# Session 16, last call: final10a.sh's verification (full build, GPU suites, sanitizers, PTX-JIT backward,
# float64-checked CLI runs + final14a_runs.txt's sm80 runs + this session's causal K/V multicast runs) on the final
# tree (causal d128 multicast from 8192 keys, static couples on the multicast kernel), then bench/compare.py's grid +
# decode on it (the standing), with the Python extension built beside the verification.
#   bash bench/integration/final16.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
cp src/cuda/CMakeLists.txt /tmp/s16f-cmakelists  # device_call_begin drops the sm80 gencode; final10a.sh builds with it
device_call_begin s16f
tree_copy "$bld/py-tree"
cp /tmp/s16f-cmakelists src/cuda/CMakeLists.txt
(cd "$bld/py-tree" && PY_DIMS="64;128;256" sm90_build_py new "" 6 400) &
printf '%s\n' "--backend cuda_sm90 --head-dim 64 --seqlen-q 8192 -b 2 --heads 8" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 7680 --seqlen-k 9000 -b 2 --heads 8" \
  "--backend cuda_sm90 --head-dim 128 --window=-1,100 --seqlen-q 8192 --seqlen-k 10000 -b 1 --heads 8 --alibi" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 16384 -b 1 --heads 8 --softcap 30 --sink" \
  "--backend cuda_sm90 --head-dim 96 --causal --seqlen-q 16384 -b 1 --heads 8" |
  cat bench/integration/final14a_runs.txt - >/tmp/s16f-runs.txt
trap - EXIT
FINAL_NAME=g16f EXTRA_RUNS=/tmp/s16f-runs.txt bash bench/integration/final10a.sh
wait
cp "$out/summary.txt" "$OUT/py_summary.txt"
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 300 python3 bench/compare.py --modes fwd --rounds 4 \
  --out "$OUT/compare" --tag "$(date +%Y%m%d-%H%M%S)-fwd" >"$OUT/compare_fwd.log" 2>&1
echo "== compare fwd rc=$?" >>"$OUT/summary.txt"
sed -n '/^# /,$p' "$OUT/compare_fwd.log"
