#!/usr/bin/env bash
# Session 40 (issue 6): MERGED_BOUNDARY's concept without the split tail. s40_merged.sh read the merged boundary
# 6-7% slower at d128 non-causal 2k-16k, and its key-block loop lost the uniform datapath (32 R2UR per block
# against none: local SASS); with SPLIT_TAIL=0 the loop is uniform again (1200 instructions against 1182). All
# builds here SPLIT_TAIL=0: base0, mb0 (EARLY_NEXT_LOADS=2 MERGED_BOUNDARY=1), e20 (EARLY_NEXT_LOADS=2, mb0's
# producer alone), a control copy of base0. Outputs bitwise equal to base0; 400 ms stints beside cuDNN over d128
# non-causal 2k-16k, two passes.
# Prediction: mb0 over e20 +1..+2% at 2k / 4k, less beyond; e20 over base0 -1.5% (s40_early_head.sh).
# One H200 call (~3 minutes).
#   bash bench/integration/s40_merged0.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s40n
PY_DIMS=128 sm90_build_py base0 "-DFLASHATTN_SM90_SPLIT_TAIL=0" 5 400 &
PY_DIMS=128 sm90_build_py mb0 "-DFLASHATTN_SM90_SPLIT_TAIL=0 -DFLASHATTN_SM90_EARLY_NEXT_LOADS=2 -DFLASHATTN_SM90_MERGED_BOUNDARY=1" 5 400 &
PY_DIMS=128 sm90_build_py e20 "-DFLASHATTN_SM90_SPLIT_TAIL=0 -DFLASHATTN_SM90_EARLY_NEXT_LOADS=2" 5 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy base0
PYTHONPATH=$bld/pyroot timeout 120 python3 - >>"$out/summary.txt" 2>&1 <<'PY'
import torch, flashattn_base0, flashattn_mb0
torch.manual_seed(0)
r = lambda *s: torch.randn(*s, device="cuda", dtype=torch.bfloat16)
for b, s in ((8, 2048), (4, 4096), (3, 3001)):
    q, k, v = r(b, s, 16, 128), r(b, s, 16, 128), r(b, s, 16, 128)
    x, y = flashattn_base0.flash_attn_func(q, k, v, return_lse=True), flashattn_mb0.flash_attn_func(q, k, v, return_lse=True)
    print(f"b{b} s{s}: mb0 bitwise equal {all(bool(torch.equal(a, c)) for a, c in zip(x, y))}, finite {bool(torch.isfinite(y[0]).all())}")
PY
log "equality"
stint_passes base0,mb0,e20,ctrl 128 2 0:2048,4096,8192,16384
sustained_summary base0 mb0 e20 ctrl
log total
