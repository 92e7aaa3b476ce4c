#!/usr/bin/env bash
# Session 66: the Python interface's tests on the GPU with the new MLA case (test_flash_attn_func_mla_head_dims:
# (d, dv) = (192, 128), GQA, sq != sk, causal or not, deterministic or not; on an H200 the automatic choice is
# cuda_sm90's d >= 192 backward), in an extension of head dims 64, 128, 192 and 256 with the backward.
#   bash bench/integration/s66_mla_pytest.sh
# Run (session 66, 71236ca): test_interface.py 68 passed, 32 skipped; the 8 MLA cases (cpu
# and cuda, causal or not, deterministic or not) passed. Record: s66_mla_pytest_summary.txt.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s66p
PY_DIMS="64;128;192;256" sm90_build_py new "" 16 300 -DFLASHATTN_BACKWARD=ON -DFLASHATTN_DTYPES="fp16;bf16"
py_tests_on_gpu test_interface.py
grep -E "mla" "$out/pytest.txt" | head -20 >>"$out/summary.txt"
(cd /tmp && PYTHONPATH=$bld/pyroot timeout 120 python3 -m pytest -q -p no:cacheprovider -rA -k mla \
  "$OLDPWD/tests/python/test_interface.py" 2>&1 | grep -E "PASSED|FAILED|SKIPPED|passed|failed" | cut -c1-200) \
  >>"$out/summary.txt"
log total
