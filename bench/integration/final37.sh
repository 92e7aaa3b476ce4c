#!/usr/bin/env bash
# Session 37's verification of the final tree (PREPARE_OVERLAP=1: the forward kernel of a varlen / KV-cache
# problem launched as a programmatic dependent of its prepare kernel; ACQUIRE_ONCE removed): scripts/gpu_check.sh's
# build, tests and python steps (the full build, the ctest sm90_wgmma_pipelines, every GPU suite of the test
# binary, the Python extension with its pytest suite on the GPU; no grid: the batched launches did not change and
# their kernels only gained the wait's skipped branch), then bench/varlen_compare.py on that build in 400 ms stints
# at 16k and 2k packed tokens (d128 / d256, four length mixes, causal and not, beside FA2's varlen kernel, the
# batched call on the equal mix and cuDNN's ragged path) for docs/performance.md.
# Prediction: every suite passes; varlen at 16k 1.6-2.3x FA2's varlen kernel, at 2k 0.9-2.2x.
# One H200 call (~7 minutes).
#   bash bench/integration/final37.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build tests python" gpu_check_call /tmp/f37
vl=/tmp/f37/varlen
mkdir -p "$vl"
for tokens in 16384 2048; do
  PYTHONPATH=$PWD/build/pyroot PYTHONUNBUFFERED=1 timeout 120 python3 bench/varlen_compare.py --hdims 128,256 \
    --no-sm80 --sustained 4 --tokens "$tokens" --out "$vl" --tag "final37-$tokens" >"$vl/varlen_$tokens.log" 2>&1
  echo "== varlen $tokens rc=$?" | tee -a "${OUT:-/tmp}/summary.txt"
  tail -19 "$vl/varlen_$tokens.log"
done
# A call returns at most eight files: the varlen tables and logs in one archive.
(cd "$vl" && tar -czf "${OUT:-/tmp}/varlen.tgz" .)
