#!/usr/bin/env bash
# Session 44: bench/kvcache_compare.py with its new small-batch decode rows (batch 1 / 4 / 8 over 8192 keys: the
# automatic choice, each backend, SDPA's FA2 and cuDNN), on a d128 build of the final tree.
# Prediction: auto = cuda_sm80 at batch 1 / 4 (~20 / ~70 us), cuda_sm90 at batch 8 (~82 us); 0.5-0.9x of cuDNN.
# One H200 call (~2 minutes).
#   bash bench/integration/s44_kvcompare.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s44k
PY_DIMS="128" sm90_build_py new "" 16 300
rm -f "$out"/py_*_configure.log
PYTHONPATH=$bld/pyroot timeout 150 python3 bench/kvcache_compare.py 2>&1 | grep -v Warning | tee "$out/kvcompare.txt"
log "kvcache_compare rc=$?"
grep '^{' "$out/kvcompare.txt" >"$out/kvcompare.jsonl"
