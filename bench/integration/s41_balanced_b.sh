#!/usr/bin/env bash
# Session 41 (issue 6): why s41_balanced.sh's stints read the balanced tail within their noise (1k / 2k +0.9%, 4k
# -0.7%, control 0.96-1.01) where the model predicted +2.4..2.7%. Three readings of plain couples (BALANCED_TAIL=0)
# against the balanced tail at d256 causal 1k / 2k / 4k:
#  - ncu at locked clocks: kernel time (the schedule alone, without the power limiter's clock) and DRAM bytes (the
#    tail's single tiles read a head's K/V about once per round that holds its tiles);
#  - the launch timeline at 4k (s41_timeline.patch: s40_timeline.patch on this tree), two launches each: the SM
#    time idle after the loops end (4.2% with plain couples in session 40);
#  - 400 ms stints beside cuDNN in the other order (control first, a copy of plain), three passes.
# Prediction: locked-clock time -2.5% at 2k / 4k, -2% at 1k; DRAM reads +40..100 MB at 4k; idle after the loops
# under 1.5%; if the stints still read less, the power limiter takes back what the idle tail gave.
# One H200 call (~5 minutes).
#   bash bench/integration/s41_balanced_b.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s41c
tree_copy "$bld/tl-tree" bench/integration/s41_timeline.patch
PY_DIMS=256 sm90_build_py base "" 4 400 &
PY_DIMS=256 sm90_build_py plain "-DFLASHATTN_SM90_BALANCED_TAIL=0" 4 400 &
TRACE_DIMS=256 TRACE_CLI=cli-base trace_cli_build "$bld/tl-tree" 4 &
TRACE_DIMS=256 TRACE_CLI=cli-plain trace_cli_build "$bld/tl-tree" 4 "-DFLASHATTN_SM90_BALANCED_TAIL=0" &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/cli_build_*.log
sm90_ctrl_copy plain
ncu_table 256:1:1024,256:1:2048,256:1:4096 plain,base summary.txt
for name in plain base plain base; do timeline_run "$name"; done
stint_passes ctrl,base,plain 256 3 1:1024,2048,4096
sustained_summary plain base ctrl
log total
