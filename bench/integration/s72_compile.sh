#!/usr/bin/env bash
# Session 72: the Python extension for head dims 32 and 64 (bf16, backward on) and test_compile_and_graphs.py on the GPU, whose
# new case runs attn_bias through torch.compile(fullgraph=True) (on cuda_sm80's bias kernels) beside CUDA graphs.
#   bash bench/integration/s72_compile.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s72h
PY_DIMS="32;64" sm90_build_py new "" 16 170 -DFLASHATTN_BACKWARD=ON
py_tests_on_gpu test_compile_and_graphs.py
log total
