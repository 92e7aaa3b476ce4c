#!/bin/bash
# Session 22, last call: final10a.sh's verification (full build, GPU suites, sanitizers, PTX-JIT backward,
# float64-checked CLI runs: final10a's list, final14a_runs.txt's sm80 runs and the runs below) on the final tree
# (this session's change: the d = dv = 128 two-consumer kernels' row sums fused into the P V GEMM, m64n136k16 with
# a chunk of ones after each V stage, and the shifted bit-test rescale trigger), then bench/compare.py's grid +
# decode on it (the standing), with the Python extension built beside the verification. Ask for an H200.
#   bash bench/integration/final22.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
mapfile -t runs < <(grep -v '^#' bench/integration/final22_runs.txt)
final_call s22f "${runs[@]}"
