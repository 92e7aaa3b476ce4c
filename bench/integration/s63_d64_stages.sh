#!/usr/bin/env bash
# Prepared in session 62 (not yet run): STAGES3, three stages of the Q / dO ring in the d = 64 backward kernels of
# two consumers (below 2048 keys; 176 KB of shared memory), beside the tree (STAGES3=0, package flashattn_base).
# s62_stalls_d64_d128.sh read those kernels at 1k tokens with the tensor pipe active 30-40% and the long
# scoreboard as the top stall (2.0-2.2 per issued instruction). Predicted: 0.93-0.98x the time at 512-1k, level
# from 2k (the three-consumer kernel takes over there). The tests run on the variant (TREE_CUDA_FLAGS); local
# ptxas: no spills in the two-consumer d64 kernels with three stages.
#   bash bench/integration/s63_d64_stages.sh
# (Run in session 63 on 32e516e: d64 grid / random / determinism cases 22 passed, racecheck clean over 11; time
# against two stages 0.962 / 0.974 / 0.981 non-causal and 0.989 / 0.989 / 0.993 causal at 512 / 1k / 2k
# (predicted 0.93-0.98 at 512-1k). Kept: STAGES3 defaults to 1. Records: s63_d64_stages.jsonl.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s63a
PY_DIMS=64 sm90_build_py base "" 5 300 -DFLASHATTN_BACKWARD=ON &
TREE_CUDA_FLAGS="-DFLASHATTN_SM90_BWD_D64_STAGES3=1" tests_and_py_build "64"
wait
first_cases 'Grid/BackwardTest.*cuda_sm90_*_d64_*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*' 120 ||
  exit 1
backward_compare_vs_base stages 150 --hdims 64 --seqlens 512,1024,2048 --rounds 2 --settle-ms 100 \
  --check-max-seqlen 1024 --backends cuda_sm90,cuda_sm90:det --base-backends cuda_sm90
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d64_*:-*dropout*:*2100*:*2200*' 120 racecheck
log total
