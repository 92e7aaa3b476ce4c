#!/usr/bin/env bash
# Session 64, call 5: the d256 dQ pass's dQ through shared memory (each consumer's own rows of Q's buffer) and
# TMA stores (s64_dq_staged.patch: 128 4-byte stores a thread before), against the tree without the patch (the
# main kernel's STAGED_KEY_STORE on in both). Tests on the patched tree: the cuda_sm90 backward's d256 cases,
# Api, synccheck and racecheck. Predicted: 0.93-0.97x the time at 512-1k, ~0.99x from 4k.
#   bash bench/integration/s64_dq_staged.sh
# (Run in session 64: 0.977 / 1.001 / 1.006 / 0.990x the time non-causal, 0.959 / 0.984 / 1.021 / 1.012 causal at
# 512 / 1k / 4k / 16k: level beyond 512, not kept (the patch stays here). The d256-only build's
# Api.Sm90BackwardRouting failed on the missing d128: fixed in the test, s64_api_dims.sh.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s64q
tests_and_base_around_patch bench/integration/s64_dq_staged.patch "256" -DFLASHATTN_BACKWARD=ON
backward_sm90_first_cases 150
backward_compare_vs_base dq_staged_vs_base 120 --hdims 256 --seqlens 512,1024,4096,16384 --rounds 2 \
  --settle-ms 100 --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*' 150
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*:-*dropout*:*2048x2048*' 100 synccheck racecheck
log total
