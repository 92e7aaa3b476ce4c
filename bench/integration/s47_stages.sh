#!/usr/bin/env bash
# Session 47 (issue 6): six K/V stages for the narrow decode tile at d = 64 (forward_config.h
# FLASHATTN_SM90_NARROW_D64_STAGES; 192 KB in flight per SM instead of four stages' 128 KB; base: the tree built
# with 4). One call: the test binary and extension at d64 (both dtypes), the sm90 KV-cache / forward / split-KV
# suites, racecheck / synccheck on d64 narrow cases, s46_decode_dims.py's d64 narrow rows (narrow64) base vs new.
# Prediction: if the narrow loop is bound by bytes in flight (s47_ncu.sh), 0.80-0.90 at 4k-16k keys batch 1-4,
# ~1.0 at 1k and at batch 64.
# Measured 0.95-1.03 (0.949 at 16k keys batch 1 only): not kept; the switch is in s47_stages.patch (apply it first to
# rerun this).
#   patch -p1 < bench/integration/s47_stages.patch && bash bench/integration/s47_stages.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s47s
tree_and_flag_base "64" "-DFLASHATTN_SM90_NARROW_D64_STAGES=4"  # sets tests
gtest_suites '*KVCache*cuda_sm90*:*Forward*cuda_sm90*:*SplitKV*:*Workspace*' 100
sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90_*_2x900_*:Grid/KVCacheTest.*cuda_sm90_*_1x2600_*' 60 racecheck synccheck
(cd bench/integration && PYTHONPATH=$bld/pyroot FLASHATTN_DIMS_ROWS=narrow64 timeout 100 python3 s46_decode_dims.py base new) 2>&1 |
  grep -v Warning >"$out/stages.jsonl"
log "A/B rc=$?"
ab_summary "$out/stages.jsonl"
log total
