#!/usr/bin/env bash
# Session 41 (issue 6): the d128 row sums in the P V GEMM (ROW_SUM_D128, kept in session 22 on +1.2%, +1.5-2.3% at
# 16k) measured again in 400 ms stints with cuDNN interleaved. Session 22 timed with same-process A/Bs, which
# session 26 found to hide the energy effect; under the power limit the fused form's 6% more P V tensor work (3% of
# a block's) may cost more than the 64 FADD per block and warp it removes. The headline rows (d128 non-causal 8k /
# 16k) run it. Builds: base (the tree), rs0 (ROW_SUM_D128=0: sums in the softmax), a control copy of base; outputs
# compared (max difference, finite), three passes over d128 non-causal 2k-16k and causal 4k-16k.
# Prediction: rs0 within -1..+1% (energy against instructions); below 0.99 at 16k would confirm session 22.
# One H200 call (~5 minutes).
#   bash bench/integration/s41_rowsum.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s41r
PY_DIMS=128 sm90_build_py base "" 8 400 &
PY_DIMS=128 sm90_build_py rs0 "-DFLASHATTN_SM90_ROW_SUM_D128=0" 8 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy base
PYTHONPATH=$bld/pyroot timeout 120 python3 - >>"$out/summary.txt" 2>&1 <<'PY'
import torch, flashattn_base, flashattn_rs0
torch.manual_seed(0)
r = lambda *s: torch.randn(*s, device="cuda", dtype=torch.bfloat16)
for b, sq, sk, causal in ((1, 16384, 16384, False), (4, 4096, 4096, True), (3, 1000, 3001, False)):
    q, k, v = r(b, sq, 16, 128), r(b, sk, 16, 128), r(b, sk, 16, 128)
    x = flashattn_base.flash_attn_func(q, k, v, causal=causal)
    y = flashattn_rs0.flash_attn_func(q, k, v, causal=causal)
    print(f"b{b} {sq}x{sk} causal {causal}: max |rs0 - base| {(x.float() - y.float()).abs().max().item():.3g}, "
          f"finite {bool(torch.isfinite(y).all())}")
PY
log "outputs"
stint_passes base,rs0,ctrl 128 3 0:2048,4096,8192,16384 1:4096,8192,16384
sustained_summary base rs0 ctrl
log total
