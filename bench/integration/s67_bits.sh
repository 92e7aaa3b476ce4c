#!/usr/bin/env bash
# Session 67, second dropout call. s67_dropout.sh's first form (e7419a9) was correct (190 passed, racecheck /
# synccheck clean, pytest 68) but cuda_sm90 with dropout ran 1.4-2.0x the time of its plain kernel: its drop
# bits were formed as 8-bit words and spread bit by bit (~60 instructions a call beside Philox's ~45). Now:
# each draw's bit is set in place (dropout_drop_bits: compares in a word's high half), the helpers shared
# with cuda_sm80 (cuda/sm80/dropout.h), and cuda_sm80's general backward kernel uses them instead of one
# Philox call per element (8x the calls; cuda_sm80 with dropout read 62-145 TFLOP/s, ~0.25-0.55x SDPA's FA2).
# The tree against s67_bits.patch reversed (e7419a9's kernels) as flashattn_base, in one process:
# 1. every CUDA backward suite (both backends' dropout cases), racecheck / synccheck over cuda_sm90's dropout
#    cases, memcheck / racecheck over cuda_sm80's;
# 2. --dropout 0.1 at d 64 / 128 / 256, 1k / 4k / 16k: predicted cuda_sm90 0.85-0.92x the time of the base,
#    cuda_sm80 0.3-0.4x (2.5-3.5x the speed).
#   bash bench/integration/s67_bits.sh
# Run (868963e): suites 154 passed (80 skipped: dims not built), racecheck / synccheck clean over 8 cuda_sm90
# dropout cases, memcheck / racecheck over 9 cuda_sm80 ones. cuda_sm90 0.989-1.023x the time of the base (not
# the 0.85-0.92x predicted: the bits were not the cost, s67_stalls.sh); cuda_sm80 0.44-0.50x at d64 / d128,
# 0.65-0.68x at d256 (2.0-2.3x / 1.5x the speed; now 0.57-0.86x SDPA's FA2 with dropout on the H200).
# Record: s67_bits_summary.txt, s67_bits.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s67b
tests_and_base_around_patch bench/integration/s67_bits.patch "64;128;256" -DFLASHATTN_BACKWARD=ON || exit 1
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*dropout*' 100 racecheck synccheck
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm80_*dropout*' 150 memcheck racecheck
backward_compare_vs_base drop 200 --hdims 64,128,256 --seqlens 1024,4096,16384 --dropout 0.1 --rounds 2 \
  --settle-ms 100 --backends cuda_sm90,cuda_sm80 --base-backends cuda_sm90,cuda_sm80
log total
