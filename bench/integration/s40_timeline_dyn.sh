#!/usr/bin/env bash
# Session 40 (issue 6): s40_timeline.sh's trace of d256 causal 4k with the placement clusters' static couples
# (the default) and without them (PLACEMENT_MAX_SEQLEN=2048: the 64-key kernel on the dynamic schedule at 4k, which
# session 32 read at 0.995 of the default in stints), both builds traced, one launch each (the last of 5), read by
# bench/timeline_trace.py: does the dynamic schedule leave less of the span idle at the end (4.2% with the couples)?
# One H200 call (~2 minutes).
#   bash bench/integration/s40_timeline_dyn.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s40d
tree_copy "$bld/tl-tree" bench/integration/s40_timeline.patch
TRACE_DIMS=256 TRACE_CLI=cli-couples trace_cli_build "$bld/tl-tree" 8 &
TRACE_DIMS=256 TRACE_CLI=cli-dynamic trace_cli_build "$bld/tl-tree" 8 "-DFLASHATTN_SM90_PLACEMENT_MAX_SEQLEN=2048" &
wait
for name in couples dynamic couples dynamic; do timeline_run "$name"; done
log total
