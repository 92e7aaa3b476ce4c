#!/usr/bin/env bash
# Session 62, third call: the d = 256 main kernel (dK / dV) with one consumer's dV and the other's dK
# (BackwardConfig::kSplitGradients: consumer 0 S^T, P^T and dV, consumer 1 dP^T, dS^T and dK, P^T handed
# over in shared memory), beside the tree before it (session 61's column split: s62_gradsplit.patch reversed,
# package flashattn_base). ncu read the column-split main kernel at 522 TFLOP/s (d256 non-causal 16k) against
# the dQ pass's 681 (s62_overlap.sh). Predicted: the main kernel 1.15-1.25x faster, the whole backward
# 1.08-1.15x. Then the d256 cases, racecheck / synccheck over them (the hand-over's barriers) and each
# kernel's time (ncu).
#   bash bench/integration/s62_gradsplit.sh
# (Run on d05f9c2 (the commit that added it). Measured 1.00-1.06x the time of the column split (softcap 30:
# 1.04-1.06); the main kernel read the same under ncu (d256 non-causal 16k 8.52 ms against 8.43): not kept,
# reverted; s62_gradsplit.patch is the diff that adds it back.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s62c
tests_and_base_around_patch bench/integration/s62_gradsplit.patch "256" -DFLASHATTN_BACKWARD=ON
first_cases 'Grid/BackwardTest.*cuda_sm90_*_d256_*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*D256*' 120 ||
  exit 1
backward_compare_vs_base gradsplit 150 --hdims 256 --seqlens 1024,4096,16384 --rounds 2 --settle-ms 100 \
  --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
backward_compare_vs_base gradsplit_softcap 60 --hdims 256 --seqlens 4096 --rounds 2 --settle-ms 100 \
  --check-max-seqlen 4096 --backends cuda_sm90 --base-backends cuda_sm90 --softcap 30
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d256_*:-*dropout*:*2048x2048*' 120 racecheck
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d256_*:-*dropout*:*2048x2048*' 60 synccheck
ncu_backward_times 256 1024,16384
log total
