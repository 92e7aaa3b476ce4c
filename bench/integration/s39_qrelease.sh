#!/usr/bin/env bash
# Session 39 (issue 6): EARLY_Q_RELEASE=1, Q's buffer released after each tile's first S GEMM in the d = dv = 128
# two-consumer kernels, whose S GEMMs take all of Q from registers (ForwardConfig kEarlyQRelease). s39_epitrace.sh's
# per-warp trace put 1.1 us (p90 1.6) between a tile's last P V and the first S issue of its successor, which waits
# for the next Q; the producer could load it only after both consumers' last S, a key block before the tile's end.
# Builds (d128 bf16 Python extensions): base and eq (the switch), a control copy of base. Outputs bitwise equal on
# non-causal, causal (single-CTA and cluster instances), GQA and varlen calls; then 400 ms stints beside cuDNN over
# d128 non-causal 2k-16k and causal 2k-8k, two passes.
# Prediction: +1..+2% at non-causal 2k / 4k (1.1 us of ~24 / 46 us per tile), +0.5% at 8k, causal rows smaller.
# EARLY_Q_RELEASE exists on cfabebd only (removed after this run).
# One H200 call (~4 minutes).
#   bash bench/integration/s39_qrelease.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s39q
PY_DIMS=128 sm90_build_py base "" 8 300 &
PY_DIMS=128 sm90_build_py eq "-DFLASHATTN_SM90_EARLY_Q_RELEASE=1" 8 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy base
PYTHONPATH=$bld/pyroot timeout 90 python3 - >>"$out/summary.txt" 2>&1 <<'PY'
import torch, flashattn_base, flashattn_eq
torch.manual_seed(0)
def same(name, f):
    x, y = f(flashattn_base), f(flashattn_eq)
    x, y = (x[0], y[0]) if isinstance(x, tuple) else (x, y)
    print(f"{name}: bitwise equal {bool(torch.equal(x, y))}, finite {bool(torch.isfinite(y).all())}")
r = lambda *s: torch.randn(*s, device="cuda", dtype=torch.bfloat16)
q, k, v = r(8, 2048, 16, 128), r(8, 2048, 16, 128), r(8, 2048, 16, 128)
same("non-causal 2k", lambda m: m.flash_attn_func(q, k, v))
same("causal 2k", lambda m: m.flash_attn_func(q, k, v, causal=True))
q8, k8, v8 = r(2, 8192, 16, 128), r(2, 8192, 16, 128), r(2, 8192, 16, 128)
same("causal 8k (cluster)", lambda m: m.flash_attn_func(q8, k8, v8, causal=True))
same("non-causal 8k (cluster)", lambda m: m.flash_attn_func(q8, k8, v8))
qg, kg, vg = r(4, 1000, 32, 128), r(4, 3000, 4, 128), r(4, 3000, 4, 128)
same("GQA 32/4 1000x3000", lambda m: m.flash_attn_func(qg, kg, vg))
same("GQA window", lambda m: m.flash_attn_func(qg, kg, vg, window_size=(256, 0)))
lens = torch.tensor([0, 300, 2200, 2300, 4400], device="cuda", dtype=torch.int32)
qv, kv, vv = r(4400, 16, 128), r(4400, 16, 128), r(4400, 16, 128)
same("varlen causal", lambda m: m.flash_attn_varlen_func(qv, kv, vv, lens, lens, 2200, 2200, causal=True))
same("varlen", lambda m: m.flash_attn_varlen_func(qv, kv, vv, lens, lens, 2200, 2200))
PY
log "equality"
for pass in p1 p2; do
  sustained_rows base,eq,ctrl 128 0 2048,4096,8192,16384 "$pass" 400 150
  sustained_rows base,eq,ctrl 128 1 2048,4096,8192 "$pass" 400 150
  log "stints $pass"
  cp "$out/ab.jsonl" "${OUT:-/tmp}/" 2>/dev/null
done
sustained_summary base eq ctrl
log total
