#!/usr/bin/env bash
# Session 42: the Python interface's last changes on the GPU (torch.jit.trace takes the op; the Function route):
# the dispatch, interface, compile-and-graphs and modules tests on a d64 / d128 build with the backward, then
# bench/python_overhead.py once more (with the GPU's backlog per call).
# Prediction: the tests pass; the Function route 2.1-4.5x below the op route as before.
# One H200 call (~2 minutes).
#   bash bench/integration/s42_pyfinal.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s42f
PY_DIMS="64;128" sm90_build_py new "" 16 300 -DFLASHATTN_BACKWARD=ON
rm -f "$out"/py_*_configure.log
(cd /tmp && PYTHONPATH=$bld/pyroot timeout 240 python3 -m pytest -q -p no:cacheprovider -rs \
  "$OLDPWD/tests/python/test_dispatch.py" "$OLDPWD/tests/python/test_interface.py" \
  "$OLDPWD/tests/python/test_compile_and_graphs.py" "$OLDPWD/tests/python/test_modules.py") >"$out/pytest.txt" 2>&1
log "pytest rc=$?"
grep -E "passed|failed|FAILED|ERROR" "$out/pytest.txt" | tail -8 >>"$out/summary.txt"
PYTHONPATH=$bld/pyroot timeout 120 python3 bench/python_overhead.py --calls 2000 2>&1 | grep -v Warning |
  tee "$out/python_overhead.jsonl"
log "python_overhead rc=$?"
