#!/usr/bin/env bash
# Session 39 (issue 6): the split tail's epilogue. s39_tailtrace.sh's trace (d128 2k, one launch): a split piece's
# compute runs at the static tiles' pace (1.41 us per key block), but its epilogue takes 2-7 us where a static tile's
# takes 1.1: the record's write 1.7 us, the arrival 0.6, the last arriver's combine 4.7; the kernel then ends 25.5 us
# after the static part, about a whole unit's time. The consumer issues the next tile's first S GEMM before the
# epilogue (kEarlyNextS), so the combine runs beside that GEMM's accumulator and the Q fragments and spills (144 /
# 140 B with the interleaved combine, 380 / 280 B with the batched one, which is why it read slower). Builds (d128
# bf16 Python extensions): t0 (SPLIT_TAIL=0), base (SPLIT_TAIL=1: the session-38 kernel), ef (+ EPILOGUE_FIRST=1: a
# split piece's epilogue before the next S; 32 / 28 B), efb (+ BATCH=8, the batched combine; 32 / 28 B). ncu of
# single launches at 2k / 4k (clocks locked), then 400 ms stints beside cuDNN at 2k-16k, two passes.
# Prediction: ef / efb at 2k 2-4 us faster than base under ncu (the epilogue's spills and latency), efb faster than
# ef; in stints +0.5..+1% over base at 2k / 4k, 16k unchanged.
# The switches exist on 40f436c only (removed after this run).
# One H200 call (~4 minutes).
#   bash bench/integration/s39_epilogue.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s39e
PY_DIMS=128 sm90_build_py t0 "-DFLASHATTN_SM90_SPLIT_TAIL=0" 4 300 &
PY_DIMS=128 sm90_build_py base "-DFLASHATTN_SM90_SPLIT_TAIL=1" 4 300 &
PY_DIMS=128 sm90_build_py ef "-DFLASHATTN_SM90_SPLIT_TAIL=1 -DFLASHATTN_SM90_SPLIT_TAIL_EPILOGUE_FIRST=1" 4 300 &
PY_DIMS=128 sm90_build_py efb "-DFLASHATTN_SM90_SPLIT_TAIL=1 -DFLASHATTN_SM90_SPLIT_TAIL_EPILOGUE_FIRST=1 \
-DFLASHATTN_SM90_SPLIT_TAIL_BATCH=8" 4 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
# The four agree within bf16 rounding on a tail shape (each against t0).
PYTHONPATH=$bld/pyroot timeout 60 python3 - >>"$out/summary.txt" 2>&1 <<'PY'
import torch, flashattn_t0, flashattn_base, flashattn_ef, flashattn_efb
torch.manual_seed(0)
q, k, v = (torch.randn(8, 2048, 16, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
x = flashattn_t0.flash_attn_func(q, k, v)
for m in (flashattn_base, flashattn_ef, flashattn_efb):
    y = m.flash_attn_func(q, k, v)
    rows = (x != y).any(dim=-1)
    print(f"{m.__name__} vs t0 at 2k: rows differing {int(rows.sum())} of {rows.numel()}, "
          f"max |diff| {float((x.float() - y.float()).abs().max()):.3g}, finite {bool(torch.isfinite(y).all())}")
PY
log "diff check"
ncu_table 128:0:2048,128:0:4096 t0,base,ef,efb summary.txt \
  gpu__time_duration.sum,dram__bytes_write.sum,lts__t_bytes.sum
for pass in p1 p2; do
  sustained_rows t0,base,ef,efb 128 0 2048,4096,8192,16384 "$pass" 400 150
  log "stints $pass"
  cp "$out/ab.jsonl" "${OUT:-/tmp}/" 2>/dev/null
done
sustained_summary t0 base ef efb
log total
