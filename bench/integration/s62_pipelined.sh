#!/usr/bin/env bash
# Session 62, sixth call: the d = 256 main kernel with each step's S^T / dP^T issued right after the last step's
# dV / dK GEMMs (before waiting for them), and P^T computed while dP^T's GEMM runs, beside the tree before it
# (s62_pipelined.patch reversed: package flashattn_base). s62_final.sh's ncu: the kernel's tensor pipe busy
# 54.6% of the time, 0.34 eligible warps a scheduler, L2 hit rate 97.6%: the consumers wait, the GEMMs of a
# step and the softmax of the next in series. Predicted: the main kernel 1.10-1.20x faster, the backward
# 1.05-1.12x. Then the d256 cases on it, racecheck / synccheck, each kernel's time.
#   bash bench/integration/s62_pipelined.sh
# (Run on the commit that added it. Measured 1.13-1.16x the time (softcap 1.14-1.15); ncu: the main kernel
# 11.58 ms at non-causal 16k against 8.43. Not kept, reverted; s62_pipelined.patch is the diff that adds it.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s62g
tests_and_base_around_patch bench/integration/s62_pipelined.patch "256" -DFLASHATTN_BACKWARD=ON
first_cases 'Grid/BackwardTest.*cuda_sm90_*_d256_*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*D256*' 120 ||
  exit 1
backward_compare_vs_base pipelined 150 --hdims 256 --seqlens 1024,4096,16384 --rounds 2 --settle-ms 100 \
  --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
backward_compare_vs_base pipelined_softcap 60 --hdims 256 --seqlens 4096 --rounds 2 --settle-ms 100 \
  --check-max-seqlen 4096 --backends cuda_sm90 --base-backends cuda_sm90 --softcap 30
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d256_*:-*dropout*:*2048x2048*' 120 racecheck
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d256_*:-*dropout*:*2048x2048*' 60 synccheck
ncu_backward_times 256 1024,16384
log total
