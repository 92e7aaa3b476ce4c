#!/usr/bin/env bash
# Session 42: eager calls with inputs that need a gradient through a torch.autograd.Function over the op's own
# formula (python/flashattn/_ops.py) instead of the torch.library op's autograd wrapper. On the GPU: the
# dispatch and interface tests (d64 / d128 build with the backward), then bench/python_overhead.py (--profile) with the old route
# beside the new in one process, and s42_function_diag.py (the Function route taken apart). Prediction: flash_attn_func with requires_grad 250 -> 50-60 us of host time
# per call (no-grad 39), a forward + backward step ~100 us less; the tests pass.
# One H200 call (~3 minutes).
#   bash bench/integration/s42_py.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s42p
PY_DIMS="64;128" sm90_build_py new "" 16 400 -DFLASHATTN_BACKWARD=ON
rm -f "$out"/py_*_configure.log
PYTHONPATH=$bld/pyroot timeout 240 python3 -m pytest -q -p no:cacheprovider tests/python/test_dispatch.py \
  tests/python/test_interface.py tests/python/test_modules.py >"$out/pytest.txt" 2>&1
log "pytest rc=$?"
tail -5 "$out/pytest.txt" >>"$out/summary.txt"
PYTHONPATH=$bld/pyroot timeout 150 python3 bench/python_overhead.py --calls 2000 --profile 2>&1 | grep -v Warning |
  tee "$out/python_overhead.jsonl"
log "python_overhead rc=$?"
PYTHONPATH=$bld/pyroot timeout 100 python3 bench/integration/s42_function_diag.py 2>&1 | grep -v Warning |
  tee "$out/function_diag.jsonl"
log "function_diag rc=$?"
