#!/usr/bin/env bash
# Session 42's verification of the final tree (kernels unchanged since session 41; the Python interface's eager
# calls that need a gradient now run through a torch.autograd.Function, the CLI has run --host-time):
# scripts/gpu_check.sh's build, tests and python steps (the full build with the backward, the ctest
# sm90_wgmma_pipelines, every GPU suite, the Python extension with its pytest suite on the GPU), then on that build
# `flashattn run --host-time` for two shapes and bench/python_overhead.py (both autograd routes in one process).
# Prediction: every suite passes; host times as s42_host.sh / s42_py.sh read them (8-12 us C++, 52 vs 138 us).
# One H200 call (~7 minutes).
#   bash bench/integration/final42.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build tests python" gpu_check_call /tmp/f42
cli=build/gpu/tools/cli/flashattn
for args in "--head-dim 128 -b 1 --seqlen-q 128 --heads 16" "--head-dim 256 -b 2 --seqlen-q 1024 --heads 8 --causal"; do
  # shellcheck disable=SC2086  # a list of options
  timeout 60 "$cli" run --backend cuda_sm90 --repeat 5 --host-time 100 $args 2>&1 |
    grep -E "^flashattn run|^time|^host|PASS|FAIL" | tee -a "${OUT:-/tmp}/summary.txt"
done
PYTHONPATH=$PWD/build/pyroot timeout 150 python3 bench/python_overhead.py --calls 2000 2>&1 | grep -v Warning |
  tee "${OUT:-/tmp}/python_overhead.jsonl"
echo "== python_overhead rc=$?" | tee -a "${OUT:-/tmp}/summary.txt"
