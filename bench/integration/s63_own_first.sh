#!/usr/bin/env bash
# Session 63: OWN_FIRST (the d = 256 main kernel's consumers add their own 32 rows' share of dV and dK from
# registers before the barrier of both, and only the other consumer's rows from the staged tiles after it)
# beside the tree without it (package flashattn_base, also without STAGES3, kept from s63_d64_stages.sh:
# the d64 softcap / ALiBi rows read STAGES3 there, which s63_d64_stages.sh did not time). s62_stalls.sh read
# the main kernel's per-step barrier as its main stall (nothing of the tensor cores' in flight there).
# Predicted: 0.92-0.97x the time at d256; d64 softcap 0.96-0.99x. Then the d64 / d256 cases on it and
# racecheck over the d256 grid cases.
#   bash bench/integration/s63_own_first.sh
# (Run in session 63 with OWN_FIRST as a switch, default 0: d64 / d256 grid and determinism cases 44 passed,
# racecheck and synccheck clean over the d256 grid cases. OWN_FIRST 0.958-1.005x the time (1k / 4k / 16k:
# non-causal 0.998 / 0.993 / 0.958, causal 0.987 / 1.005 / 0.987; softcap 30 0.973-0.998); d64 softcap with
# STAGES3 0.988-0.996. Kept: OWN_FIRST defaults to 1. Records: s63_own_first_*.jsonl.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s63b
TREE_CUDA_FLAGS="-DFLASHATTN_SM90_BWD_D256_OWN_FIRST=1" tree_and_flag_base "64;256" \
  "-DFLASHATTN_SM90_BWD_D64_STAGES3=0" -DFLASHATTN_BACKWARD=ON
first_cases 'Grid/BackwardTest.*cuda_sm90_*_d256_*:Grid/BackwardTest.*cuda_sm90_*_d64_*:*DeterminismTest.Backward*' \
  150 || exit 1
common=(--rounds 2 --settle-ms 100 --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90)
backward_compare_vs_base own 120 --hdims 256 --seqlens 1024,4096,16384 "${common[@]}"
backward_compare_vs_base own_softcap 90 --hdims 256 --seqlens 1024,4096 --softcap 30 "${common[@]}"
backward_compare_vs_base d64_softcap 90 --hdims 64 --seqlens 512,1024,2048 --softcap 30 "${common[@]}"
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d256_*:-*dropout*:*2048x2048*' 60 racecheck synccheck
log total
