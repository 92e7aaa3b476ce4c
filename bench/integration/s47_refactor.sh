#!/usr/bin/env bash
# Session 47 (issue 6): the 64-row decode kernel after the combine and the O store became functions of their own
# (split_kv.h combine_split_pieces, epilogue.h issue_output_store; its SASS +8..+40 address instructions), against
# session 46's tree (s47_vs_s46.patch reversed: the whole src/ change of session 47). s46_decode_dims.py's default
# rows: d256 (16 / 8) decodes run the 64-row kernel in both trees; d64 (32 / 8) ones the narrow tile here.
# Prediction: d256 rows 0.99-1.01; d64 rows as s47_narrow.sh's (0.79-0.95).
#   bash bench/integration/s47_refactor.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s47r
PY_DIMS="64;256" PY_JOBS=8 py_builds_around_patch bench/integration/s47_vs_s46.patch
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 150 python3 s46_decode_dims.py base new) 2>&1 |
  grep -v Warning >"$out/refactor.jsonl"
log "A/B rc=$?"
ab_summary "$out/refactor.jsonl"
log total
