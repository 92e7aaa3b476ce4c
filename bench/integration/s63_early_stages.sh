#!/usr/bin/env bash
# Session 63, two switches in one call, each read on the head dim it alone changes, against the tree without
# both (package flashattn_base):
#   EARLY_SCORES (d = 256 main kernel): a step's score GEMMs issued before the step before's dV / dK GEMMs
#     are waited for (no drain of the tensor pipe between steps). Session 62's s62_pipelined.patch, which
#     also moved P^T's exponentials under dP^T's GEMM, ran 1.13-1.16x the time, not understood; this is its
#     first half alone. Predicted: 0.95-1.0x the time.
#   D128_STAGES3 (d = 128, default mode): three Q / dO stages, room made by one staged dQ tile (a barrier of
#     both consumers a step more). Predicted, from d64's STAGES3 (s63_d64_stages.sh): 0.96-0.99x at
#     512-2k, level beyond.
# The tests (d128 / d256 grid, drawn and determinism cases) run on the tree with both, then racecheck and
# synccheck over its d128 / d256 grid cases.
#   bash bench/integration/s63_early_stages.sh
# (Run in session 63 on the tree with both as switches, default 0 (s63_early_stages.patch adds them back): the
# cases 53 passed, racecheck and synccheck clean over 25. EARLY_SCORES 0.967-1.031x the time (16k 0.967 /
# 0.984, 1k 1.016 / 1.031): not kept. D128_STAGES3 1.05-1.13x (softcap 1.05-1.12): not kept; the bulk
# reduction holds its staging buffer about as long as its adds take, so the third stage's gain cannot pay for
# waiting on it every step. Records: s63_early_stages_*.jsonl.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s63c
TREE_CUDA_FLAGS="-DFLASHATTN_SM90_BWD_D256_EARLY_SCORES=1 -DFLASHATTN_SM90_BWD_D128_STAGES3=1" \
  tree_and_flag_base "128;256" "" -DFLASHATTN_BACKWARD=ON
first_cases 'Grid/BackwardTest.*cuda_sm90_*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*' \
  200 || exit 1
common=(--rounds 2 --settle-ms 100 --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90)
backward_compare_vs_base early 120 --hdims 256 --seqlens 1024,4096,16384 "${common[@]}"
backward_compare_vs_base d128_stages 120 --hdims 128 --seqlens 512,1024,2048,4096,16384 "${common[@]}"
backward_compare_vs_base d128_softcap 60 --hdims 128 --seqlens 512,1024,2048 --softcap 30 "${common[@]}"
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*:-*dropout*:*2048x2048*' 120 racecheck synccheck
log total
