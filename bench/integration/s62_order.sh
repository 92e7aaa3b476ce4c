#!/usr/bin/env bash
# Session 62, last A/B: SCORE_ORDER (the d = 256 main kernel's consumer 1 issues its score GEMMs only after
# consumer 0 has issued its own: a named barrier, arrive / sync; the tree's default) beside the same tree built
# with SCORE_ORDER=0 (package flashattn_base). s62_stalls.sh read the per-step barrier as the main kernel's main
# stall. Predicted: 0.93-0.98x the time. Then the d256 cases on it and racecheck.
#   bash bench/integration/s62_order.sh
# (Run on the commit that added it: 0.976-0.999x the time on all six rows (predicted 0.93-0.98), d256 grid and
# determinism cases (15) passed, racecheck clean. Kept.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s62k
tree_and_flag_base "256" "-DFLASHATTN_SM90_BWD_D256_SCORE_ORDER=0" -DFLASHATTN_BACKWARD=ON
first_cases 'Grid/BackwardTest.*cuda_sm90_*_d256_*:*DeterminismTest.Backward*D256*' 90 || exit 1
backward_compare_vs_base order 100 --hdims 256 --seqlens 1024,4096,16384 --rounds 2 --settle-ms 100 \
  --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d256_*:-*dropout*:*2048x2048*' 60 racecheck
log total
