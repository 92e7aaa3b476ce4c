#!/usr/bin/env bash
# Session 41's verification of the final tree (the kernels of session 38 with the softmax's row-sum chains starting
# from their first pair's sum: bitwise the same sums, 8 FADD fewer per 64-key block in every kernel with the sums in
# the softmax): scripts/gpu_check.sh's build, tests and python steps (the full build, the ctest
# sm90_wgmma_pipelines, every GPU suite, the Python extension with its pytest suite on the GPU), then the two d256
# rows nearest the FA3 anchor (causal 4k, non-causal 8k) in 400 ms stints beside cuDNN on that build, two passes.
# Prediction: every suite passes; d256 causal 4k ~1.17x cuDNN, non-causal 8k ~1.09x.
# One H200 call (~8 minutes).
#   bash bench/integration/final41.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build tests python" gpu_check_call /tmp/f41
for pass in p1 p2; do
  for spec in 1:4096 0:8192; do
    PYTHONPATH=$PWD/build/pyroot PYTHONUNBUFFERED=1 timeout 60 python3 bench/sm90r_ab.py --builds new --hdims 256 \
      --causal "${spec%%:*}" --seqlens "${spec#*:}" --sustained 5 --sustained-ms 400 2>&1 | grep -v Warning |
      sed "s/^{/{\"pass\": \"$pass\", /" >>"${OUT:-/tmp}/ab.jsonl"
  done
  echo "== stints $pass rc=$?" | tee -a "${OUT:-/tmp}/summary.txt"
done
python3 bench/integration/ab_summary.py "${OUT:-/tmp}/ab.jsonl" new | tee -a "${OUT:-/tmp}/summary.txt"
