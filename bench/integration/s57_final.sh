#!/usr/bin/env bash
# Session 57's final tree (d64's narrow decode kernel on 256-key blocks): the full test binary and extension
# (d 64 / 128 / 256, both dtypes), every cuda_sm90 d64 case (grid, drawn, KV cache, varlen), then every pytest
# file on the GPU.
#   bash bench/integration/s57_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s57f
tests_and_py_build "64;128;256"
gtest_suites '*cuda_sm90*d64*' 80
py_tests_on_gpu test_binding.py test_compile_and_graphs.py test_dispatch.py test_errors.py test_interface.py \
  test_modules.py
cp "$out/pytest.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
