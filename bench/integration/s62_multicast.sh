#!/usr/bin/env bash
# Session 62, fourth call: Q_MULTICAST (the d = 256 main kernel's CTAs in clusters of two over adjacent key
# blocks, each producer loading half of every Q / dO stage's chunks for both by TMA multicast; the tree's
# default) beside the same tree built with Q_MULTICAST=0 (package flashattn_base). ncu read the main kernel
# (dK / dV) at 522 TFLOP/s at d256 non-causal 16k, streaming 32 GB of Q / dO from L2, against the dQ pass's 681
# (16 GB); the gradient split (s62_gradsplit.sh), which cut shared-memory reads, changed nothing. Predicted: the
# main kernel 1.10-1.20x faster, the whole backward 1.06-1.12x. Then the d256 cases (tests on the multicast
# kernels), racecheck / synccheck over them, and each kernel's time (ncu).
#   bash bench/integration/s62_multicast.sh
# (Run on the commit that added it. Measured 0.98-1.04x the time (1k 1.03-1.04, 16k non-causal 0.98); the main
# kernel read the same under ncu (8.55 ms at non-causal 16k against 8.43): L2 traffic is not its limit. Not
# kept, reverted; s62_multicast.patch is the diff that adds it back.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s62d
tree_and_flag_base "256" "-DFLASHATTN_SM90_BWD_D256_Q_MULTICAST=0" -DFLASHATTN_BACKWARD=ON
first_cases 'Grid/BackwardTest.*cuda_sm90_*_d256_*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*D256*' 120 ||
  exit 1
backward_compare_vs_base multicast 150 --hdims 256 --seqlens 1024,4096,16384 --rounds 2 --settle-ms 100 \
  --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d256_*:-*dropout*:*2048x2048*' 120 racecheck
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d256_*:-*dropout*:*2048x2048*' 60 synccheck
ncu_backward_times 256 1024,16384
log total
