#!/usr/bin/env bash
# Session 71, the final tree (the forward's narrowed GEMMs at 96 / 160, the backward's at 96): a build of every head
# dim and both dtypes; the Python tests on the GPU (test_interface.py: outputs and autograd gradients of both CUDA
# backends against the float64 reference); then the drawn suites of both CUDA backends again and again with fresh
# seeds (session 70's campaign, sm90_device_common.sh drawn_fuzz: forward, varlen, KV-cache and backward cases, odd head
# dims included, so the narrowed kernels among them) for FUZZ_SECONDS (default 200).
#   bash bench/integration/s71_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s71f
tests_and_py_build "32;64;96;128;160;192;224;256"
py_tests_on_gpu test_interface.py
drawn_fuzz "${FUZZ_SECONDS:-200}"
log total
