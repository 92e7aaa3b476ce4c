#!/usr/bin/env bash
# Session 11 (issue 4), one device call: FlashAttention 2's own d256 tile (128 x 64, 8 warps, single K and V
# buffers, 1 CTA per SM) with the current row's options, against the current d256 non-causal <= 2048 row
# (64 x 64, 4 warps, 2 CTAs per SM), in the tuning harness at s = 512 (two passes, every timing >= 100 ms,
# both tile orders). Candidates: bench/integration/s11_sm80_candidates.json (current; 8 warps R E P B Q A X L;
# the same without X; without R). Ranked by bench/sm80f_pick.py against the current row.
#   bash bench/integration/s11_sm80_d256.sh
set -uo pipefail
out=/tmp/s11s80-out
rm -rf "$out" && mkdir -p "$out"
trap 'cp "$out"/* "${OUT:-/tmp}/" 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a "$out/summary.txt"
timeout 200 python3 tools/kernels/tune_forward.py --build-only --head-dims 256 --dtypes bf16 \
  --candidates bench/integration/s11_sm80_candidates.json --build /tmp/s11s80-tune >"$out/tune_build.txt" 2>&1
log "harness build rc=$?"
tail -3 "$out/tune_build.txt"
grep -hE "registers|spill" /tmp/s11s80-tune/obj/*.ptxas.txt 2>/dev/null | sort | uniq -c | tee -a "$out/summary.txt"
SM80_MIN_MS=100 SM80_NORMAL=1 SM80_BF16_ONLY=1 SM80_GENERAL_SEQLEN=0 SM80_DIMS=256 SM80_CAUSAL=0 \
  timeout 150 /tmp/s11s80-tune/sm80_tune 512,512,1024 >"$out/rows.jsonl" 2>&1
log "harness rc=$?"
python3 bench/sm80f_pick.py "$out/rows.jsonl" "$out/picks.json" 3 2>&1 | tee -a "$out/summary.txt"
