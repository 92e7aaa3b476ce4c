#!/usr/bin/env bash
# Run in session 38 (s38_confirm_summary.txt, s38_confirm_ab.jsonl): base / off 4k 1.007, 8k 1.018, 16k 1.015
# (ctrl / base 1.001 / 0.997 / 1.001); 2k: t2k / base 0.966 (both passes), so 2k stays without the tail.
# Session 38, after SPLIT_TAIL became 4096 by default (s38_tail.sh): a second, independent reading of the tail
# against the tree without it, and of the 2k row with it. Python builds of d128 (bf16): base (the default, tail
# from 4096 keys), off (SPLIT_TAIL=0), t2k (SPLIT_TAIL=2048) and ctrl (a copy of base); the d128 non-causal rows
# 2k-16k in 400 ms stints with cuDNN interleaved, two passes.
# Prediction: base / off 1.01-1.03 at 4k-16k and 1.00 at 2k (the same kernel there); t2k / base at 2k 0.99-1.00.
# One H200 call (~5 minutes).
#   bash bench/integration/s38_confirm.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s38c
sweep_builds 128 5 off=-DFLASHATTN_SM90_SPLIT_TAIL=0 t2k=-DFLASHATTN_SM90_SPLIT_TAIL=2048
log "builds $sweep_names"
for pass in p1 p2; do
  sustained_rows base,off,t2k,ctrl 128 0 2048,4096,8192,16384 "$pass" 400 160
  log "stints $pass"
  cp "$out/ab.jsonl" "${OUT:-/tmp}/" 2>/dev/null
done
sustained_summary base off t2k ctrl
log total
