#!/usr/bin/env bash
# Session 39 (issue 6): what the 1.1 us between a d128 tile's last P V and its successor's first S issue waits for.
# s39_epitrace.sh put it at 1.1 us (p90 1.6) per tile at non-causal 2k-16k; releasing Q's buffer early
# (s39_qrelease.sh) did not shorten it. This call: s39_epitrace.sh's per-warp trace with begin_tile's steps (the next
# tile's index received, its Q landed, its first K landed, the issue turn taken, Q's fragments loaded, its first S
# issued; s39_begintrace.patch), read by bench/gap_trace.py (consecutive events' gaps) at d128 non-causal 2k / 4k /
# 16k. For the next session's producer order.
# Prediction: the next Q's landing (h -> q) holds most of it.
# One H200 call (~1.5 minutes).
#   bash bench/integration/s39_begintrace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s39g
tree_copy "$bld/trace-tree" bench/integration/s39_begintrace.patch
trace_cli_build "$bld/trace-tree"
trace_cli_runs gap_trace.py summary.txt
cp "$out/summary.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
