#!/usr/bin/env bash
# Session 63, SKIP_HIDDEN's second form: in the d = 64 two-consumer default-mode kernels each consumer walks
# only the query blocks that see its own 64 keys and passes the tile's other steps with no work (loops of
# their own before and after its walk, so that the step's body is the tree's). s63_skip_hidden.sh measured the
# first form, a branch around the GEMMs inside the step: causal d64 512 / 1k 0.915 / 0.939x the time, but
# every kernel that carried it 2-7% slower elsewhere. Beside the tree without it (package flashattn_base).
# Predicted: causal 0.90-0.95x at 512-1k, level without a mask. The tests (d64 grid, drawn, determinism
# cases) run on the tree with it, then racecheck and synccheck over the d64 grid cases.
#   bash bench/integration/s63_skip2.sh
# (Run in session 63: seven causal / windowed d64 cases failed, the staged dQ tiles' buffers chosen by step;
# s63_skip2.patch has the fix, buffers by tile staged, measured in s63_final.sh. Record: s63_skip2_summary.txt.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s63e
TREE_CUDA_FLAGS="-DFLASHATTN_SM90_BWD_SKIP_HIDDEN=1" tree_and_flag_base "64" "" -DFLASHATTN_BACKWARD=ON
first_cases 'Grid/BackwardTest.*cuda_sm90_*_d64_*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*' \
  150 || exit 1
common=(--rounds 2 --settle-ms 100 --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90)
backward_compare_vs_base skip2 100 --hdims 64 --seqlens 512,1024,2048 "${common[@]}"
backward_compare_vs_base skip2_softcap 60 --hdims 64 --seqlens 512,1024 --causal 1 --softcap 30 "${common[@]}"
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d64_*:-*dropout*' 120 racecheck synccheck
log total
