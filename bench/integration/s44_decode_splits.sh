#!/usr/bin/env bash
# Session 44: small-batch decoding over long caches by backend and split count, beside SDPA's FA2 and cuDNN
# (bench/integration/s44_decode_splits.py), on a d128 bf16 build of the tree.
# Prediction: the automatic choice (cuda_sm80, one split) far below the bandwidth; more splits on cuda_sm80
# 2-4x faster at batch 1-8; cuda_sm90 without a split faster than cuda_sm80's one split (packed GQA).
# One H200 call (~3 minutes).
#   bash bench/integration/s44_decode_splits.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s44d
PY_DIMS="128" sm90_build_py new "" 16 300
rm -f "$out"/py_*_configure.log
PYTHONPATH=$bld/pyroot timeout 200 python3 bench/integration/s44_decode_splits.py 2>&1 | grep -v Warning |
  tee "$out/decode_splits.jsonl"
log "decode_splits rc=$?"
