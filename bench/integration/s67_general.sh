#!/usr/bin/env bash
# Session 67, third dropout call. s67_stalls.sh (ncu, d64 / d128 4k non-causal): the general kernel with
# nothing to modify (ALiBi slopes of 0) already issued 2x the plain kernel's instructions (d128 1.06 G against
# 0.54 G, 3.21 against 2.26 ms) -- softcap, ALiBi and the mask were run-time tests in every element -- and
# dropout added 0.51 G more (4.23 ms). Now the modifiers are template arguments chosen once a step (four forms
# of one pass), the mask a pass of its own on masked steps only (as the plain kernels), dropout's keep factors
# a pass before (dP) and after (P) the general pass. The tree against s67_general.patch reversed (868963e) as
# flashattn_base, in one process:
# 1. every CUDA backward suite, racecheck / synccheck over cuda_sm90's general grid cases (softcap, ALiBi,
#    dropout);
# 2. dropout 0.1 and softcap 30 at d 64 / 128 / 256, 1k / 4k / 16k, causal and not. Predicted: softcap 0.80-0.90x
#    the time of the base, dropout 0.75-0.85x.
#   bash bench/integration/s67_general.sh
# Run (c22389a): suites 154 passed, racecheck / synccheck clean over 24 cuda_sm90 general cases. Dropout 0.685-0.864x
# the time of the base (d64 0.69-0.82, d128 0.79-0.86, d256 0.83-0.86), softcap 0.73-0.91x; with dropout now
# d64 0.76-0.88x cuDNN's dropout (1.0-1.16x SDPA's FA2), d128 0.86-0.97x (1.27-1.5x FA2), d256 1.0-1.38x.
# Record: s67_general_summary.txt, s67_general_dropout.jsonl, s67_general_softcap.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s67g
tests_and_base_around_patch bench/integration/s67_general.patch "64;128;256" -DFLASHATTN_BACKWARD=ON || exit 1
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*softcap*:Grid/BackwardTest.*cuda_sm90_*alibi*:Grid/BackwardTest.*cuda_sm90_*dropout*' \
  150 racecheck synccheck
for mods in "--dropout 0.1" "--softcap 30"; do
  name=$(echo "$mods" | tr -d ' -.')
  # shellcheck disable=SC2086  # $mods: two words
  backward_compare_vs_base "$name" 150 --hdims 64,128,256 --seqlens 1024,4096,16384 $mods --rounds 2 \
    --settle-ms 100 --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
done
log total
