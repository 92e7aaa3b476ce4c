#!/usr/bin/env bash
# Session 39 (issue 6): where a d128 tile's epilogue time goes. s39_tailtrace.sh's trace (d128 2k, one launch) put a
# static tile's epilogue (after the next tile's first S is issued, to its end) at 1.0-1.1 us per consumer, both
# consumers in it at once, against ~45 us per 32-block tile at 4k: ~2% of the tile with the tensor cores mostly idle.
# This call: a CLI build with a per-warp trace (s39_epitrace.patch: the last P V's completion, begin_tile's end, O in
# shared memory, the proxy fence, the barrier, the TMA store's issue, the end), read by bench/epilogue_trace.py at d128
# non-causal 2k / 4k / 16k (SPLIT_TAIL=1, which the trace rides on: the last two static rounds are traced).
# Prediction: most of the microsecond in one phase (the barrier, waiting for the warpgroup's slowest warp, or the
# fence).
# One H200 call (~2 minutes).
#   bash bench/integration/s39_epitrace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s39p
tree_copy "$bld/trace-tree" bench/integration/s39_epitrace.patch
trace_cli_build "$bld/trace-tree"
trace_cli_runs epilogue_trace.py summary.txt
cp "$out/summary.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
