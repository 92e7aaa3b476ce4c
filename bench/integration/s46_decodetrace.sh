#!/usr/bin/env bash
# Session 46 (issue 6): where a split-KV decode piece's time goes. Session 45 read cuDNN at 0.68-0.73 of our time at
# 1024 keys and at 4096 keys batch 1-2 (a fixed cost per call), and ncu's PC samples spread over the piece's waits.
# A trace (s46_decodetrace.patch: the global timer at the decode kernel's entry, barrier, each tile handoff, Q / K / V
# issue, K and V arrival, S and P V done, record, arrival, combine and store, per CTA for the producer thread and
# the consumer's first thread; bench/decode_trace.py) of flash_attn_func-shaped decode calls (one query row, GQA
# 32/8, d128, bf16, dense K/V, no prepare kernel) at 1024 / 4096 / 16384 keys, batch 1 and 4, beside the untraced
# CLI's times.
# Prediction: the kernel's span at 1024 keys b1 ~8-9 us, of which the first K's arrival ~2-3 us after the entry,
# the arrival and combine ~2 us; whatever is longer than that is the lever.
# One H200 call (~3 minutes).
#   bash bench/integration/s46_decodetrace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s46t
tree_copy "$bld/trace-tree" bench/integration/s46_decodetrace.patch
TRACE_CLI=cli-trace trace_cli_build "$bld/trace-tree" 8 &
TRACE_CLI=cli-base trace_cli_build . 8 &
wait
decode_run() {
  local cli=$1 keys=$2 batch=$3
  "$bld/$cli/tools/cli/flashattn" run --backend cuda_sm90 --repeat 50 --verify none --dtype bf16 -b "$batch" \
    --heads 32 --heads-kv 8 --seqlen-q 1 --seqlen-k "$keys" --head-dim 128 2>&1 | grep -E "^(time|kernel|backend)"
}
for shape in 1024:1 4096:1 4096:4 16384:1; do
  keys=${shape%:*} batch=${shape#*:}
  {
    echo "== keys $keys batch $batch: base CLI"
    decode_run cli-base "$keys" "$batch"
    echo "== traced CLI"
    FLASHATTN_TAIL_TRACE=$bld/trace.bin decode_run cli-trace "$keys" "$batch"
    timeout 60 python3 bench/decode_trace.py "$bld/trace.bin" --ctas 3
  } >>"$out/summary.txt" 2>&1
  log "shape $shape"
done
log total
