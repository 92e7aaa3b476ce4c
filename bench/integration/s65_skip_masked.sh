#!/usr/bin/env bash
# Session 65: SKIP_HIDDEN as the masked d = 64 calls' own kernel (BackwardConfig::kSkipHidden, units
# backward_hdim64_{dtype}_masked.cu; run_backward picks it below 2048 keys under a causal or window band):
# session 64's fourth form (causal 512 / 1k 0.921 / 0.912x the time in the plain kernel, but 1.02-1.05x on the
# unmasked rows it now never runs). The other kernels' SASS is identical to the tree before (local cuobjdump,
# d64 / d128 default units); the masked kernel no spills. Against the tree built with SKIP_HIDDEN=0 (those
# calls on the plain two-consumer kernel): the cuda_sm90 first cases, every CUDA backward suite (this tree's
# preprocess too: its final form, the tiled preprocess with the grid-stride postprocess, first runs here), the
# interface tests, synccheck and racecheck over the cuda_sm90 grid cases (two new masked d64 cases among them),
# then d64 causal and non-causal (the control: the same kernel in both builds) at 512-2k (2048: three
# consumers, also the same). Predicted: causal 512 / 1k / 1.5k 0.91-0.94x the time, the rest level.
#   bash bench/integration/s65_skip_masked.sh
# Result (session 65, run on 640e147, H200): KEPT. d64 causal 512 / 1k / 1.5k 0.912 / 0.915 /
# 0.923x the time (0.976-0.980x cuDNN, from ~0.89); the control rows (the same kernels in both builds) read
# 1.001-1.027x. First cases 80 passed, suites 145 passed, pytest 60 passed, synccheck and racecheck clean over
# 44 cuda_sm90 backward grid cases. Records: s65_skip_masked_summary.txt, s65_skip_masked.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s65s
tree_and_flag_base "64;128;256" "-DFLASHATTN_SM90_BWD_SKIP_HIDDEN=0" -DFLASHATTN_BACKWARD=ON
backward_sm90_first_cases 150
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 200
py_tests_on_gpu test_interface.py
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*:-*dropout*:*2048x2048*' 120 synccheck racecheck
backward_compare_vs_base skip_masked 150 --hdims 64 --seqlens 512,1024,1536,2048 --rounds 2 --settle-ms 100 \
  --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
cp "$out/pytest.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
