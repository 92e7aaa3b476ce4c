#!/usr/bin/env bash
# Session 40 (issue 6): EARLY_NEXT_LOADS, the d = dv = 128 two-consumer kernels' producer issuing the next tile's
# head before the current tile's last V load (producer.h producer_loop_early_head): 1 its index and first K, 2 its
# Q as well, with Q's buffer released after each tile's first S (kEarlyQRelease). s39_begintrace.sh put 0.19 us
# per tile (median) on the consumers' wait for the next first K and 0.1-0.13 on the issue turn, after 0.58 us of
# finalisation and decoding; the producer issued that K only after the last V, whose stage is released a softmax
# later than the K's.
# Builds (d128 bf16): Python extensions base (0), e1, e2 and a control copy of base; the per-warp trace CLI
# (s39_begintrace.patch) with 0 and 2. Outputs bitwise equal to base on non-causal (single CTA, multicast, split
# tail), causal, GQA, varlen and KV-cache calls; the traces' gaps at d128 non-causal 2k / 4k / 16k; then 400 ms
# stints beside cuDNN over d128 non-causal 2k-16k and causal 2k-8k, two passes.
# Prediction: q->k near 0 in the trace with 2, i->S and L->i shorter by ~0.2 us; stints +0.3..+1% at non-causal
# 2k / 4k, less at 8k / 16k; causal within the noise.
# One H200 call (~6 minutes).
#   bash bench/integration/s40_early_head.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s40e
tree_copy "$bld/trace-tree" bench/integration/s39_begintrace.patch
TRACE_CLI=cli0 trace_cli_build "$bld/trace-tree" 3 &
TRACE_CLI=cli2 trace_cli_build "$bld/trace-tree" 3 "-DFLASHATTN_SM90_EARLY_NEXT_LOADS=2" &
PY_DIMS=128 sm90_build_py base "" 3 400 &
PY_DIMS=128 sm90_build_py e1 "-DFLASHATTN_SM90_EARLY_NEXT_LOADS=1" 3 400 &
PY_DIMS=128 sm90_build_py e2 "-DFLASHATTN_SM90_EARLY_NEXT_LOADS=2" 3 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/cli_build_*.log
sm90_ctrl_copy base
PYTHONPATH=$bld/pyroot:bench timeout 120 python3 - >>"$out/summary.txt" 2>&1 <<'PY'
import torch, flashattn_base, flashattn_e1, flashattn_e2
from bitwise_builds import same
torch.manual_seed(0)
builds = [flashattn_base, flashattn_e1, flashattn_e2]
r = lambda *s: torch.randn(*s, device="cuda", dtype=torch.bfloat16)
q, k, v = r(8, 2048, 16, 128), r(8, 2048, 16, 128), r(8, 2048, 16, 128)
same("non-causal 2k (cluster)", lambda m: m.flash_attn_func(q, k, v), builds)
same("causal 2k", lambda m: m.flash_attn_func(q, k, v, causal=True), builds)
q4, k4, v4 = r(4, 4096, 16, 128), r(4, 4096, 16, 128), r(4, 4096, 16, 128)
same("non-causal 4k (split tail)", lambda m: m.flash_attn_func(q4, k4, v4), builds)
q8, k8, v8 = r(2, 8192, 16, 128), r(2, 8192, 16, 128), r(2, 8192, 16, 128)
same("causal 8k (cluster)", lambda m: m.flash_attn_func(q8, k8, v8, causal=True), builds)
same("non-causal 8k (split tail)", lambda m: m.flash_attn_func(q8, k8, v8), builds)
qs, ks, vs = r(16, 1000, 16, 128), r(16, 1000, 16, 128), r(16, 1000, 16, 128)
same("non-causal 1000 (single CTA, ragged)", lambda m: m.flash_attn_func(qs, ks, vs), builds)
same("window 1000", lambda m: m.flash_attn_func(qs, ks, vs, window_size=(100, 50)), builds)
qg, kg, vg = r(4, 1000, 32, 128), r(4, 3000, 4, 128), r(4, 3000, 4, 128)
same("GQA 32/4 1000x3000", lambda m: m.flash_attn_func(qg, kg, vg), builds)
same("GQA causal", lambda m: m.flash_attn_func(qg, kg, vg, causal=True), builds)
lens = torch.tensor([0, 300, 2200, 2300, 4400], device="cuda", dtype=torch.int32)
qv, kv, vv = r(4400, 16, 128), r(4400, 16, 128), r(4400, 16, 128)
same("varlen causal", lambda m: m.flash_attn_varlen_func(qv, kv, vv, lens, lens, 2200, 2200, causal=True), builds)
same("varlen", lambda m: m.flash_attn_varlen_func(qv, kv, vv, lens, lens, 2200, 2200), builds)
kc, vc = r(4, 4096, 8, 128), r(4, 4096, 8, 128)
qc = r(4, 300, 32, 128)
seqlens = torch.tensor([1000, 4000, 17, 2500], device="cuda", dtype=torch.int32)
same("KV cache 300 x cache", lambda m: m.flash_attn_with_kvcache(qc, kc, vc, cache_seqlens=seqlens, causal=True), builds)
PY
log "equality"
TRACE_CLI=cli0 trace_cli_runs gap_trace.py summary.txt
TRACE_CLI=cli2 trace_cli_runs gap_trace.py summary.txt
stint_passes base,e1,e2,ctrl 128 2 0:2048,4096,8192,16384 1:2048,4096,8192
sustained_summary base e1 e2 ctrl
log total
