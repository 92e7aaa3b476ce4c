#!/usr/bin/env bash
# Prepared in session 65 (not run). Two things in one call:
# 1. The check of session 65's last change, made after its device time: the backward postprocess writes rows
#    past seqused_q as zeros without reading their accumulator rows (which the tiled preprocess no longer
#    zeroes). Every CUDA backward suite (both backends; varlen with seqused among them) and memcheck over the
#    varlen backward grid cases.
# 2. D64_THREE_FROM (backward_config.h, default 2048): the d64 calls on the two-consumer kernels at every length
#    (the tree and its tests built with the threshold past any length) against the default (base package):
#    three consumers won +7-12% at 2k-8k in session 59, before the two-consumer kernel became persistent,
#    three-staged, took the staged dK / dV stores and, under a band, the masked kernel (SKIP_HIDDEN), which
#    would then serve causal 2k+ too. Predicted: causal 2k-4k 0.95-1.0x the time (the masked kernel), non-causal
#    0.97-1.05x; 16k level or slower. Synccheck and racecheck over the d64 cases past 2048 keys, now on two
#    consumers.
#   bash bench/integration/s66_first.sh
# Run (session 66, 24af91c): suites 149 passed (57 skipped), memcheck clean over 39 varlen cases, synccheck and
# racecheck clean over 5 d64 cases past 2048 keys on two consumers. Two consumers against three (time): non-causal
# 2k / 4k / 8k / 16k 0.986 / 1.039 / 1.034 / 1.061, causal 1.009 / 1.040 / 1.064 / 1.054 (0.93-0.96x cuDNN). Not
# kept: D64_THREE_FROM stays 2048. Records: s66_first_summary.txt, s66_first.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s66f
TREE_CUDA_FLAGS="-DFLASHATTN_SM90_BWD_D64_THREE_FROM=1073741824" tree_and_flag_base "64;128;256" "" \
  -DFLASHATTN_BACKWARD=ON
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda*varlen*:-*dropout*' 120 memcheck
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*x2100_*:Grid/BackwardTest.*cuda_sm90_*x2200_*' 100 \
  synccheck racecheck
backward_compare_vs_base d64_two_consumers 200 --hdims 64 --seqlens 2048,4096,8192,16384 --rounds 2 \
  --settle-ms 100 --check-max-seqlen 2048 --backends cuda_sm90 --base-backends cuda_sm90
log total
