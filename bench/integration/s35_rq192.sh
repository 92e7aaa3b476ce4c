#!/usr/bin/env bash
# Session 35: Q in registers for the d = 192 S GEMM (FLASHATTN_SM90_REGISTER_Q_D192=1: all 12 k-steps in the
# (192, 128) kernels, the DeepSeek-style prefill pair; the first 8 at dv = 192, where 12 spilled). Session 34's d128
# form read +0.6% in stints, the paged d128 instances +0.7..+3.7% (s35_paged_rq.sh); at d192 the S GEMM is 60% of
# the tensor work (40% at d128), so the shared-memory operand bytes saved per FLOP are larger. Local SASS (nvcc
# 13.0): no local-memory access added, no serialised wgmma, 12 / 8 LDSM per kernel.
# Builds: the C++ tests and CLI with the switch (d 192 and its (192, 128) pair, fp16 + bf16) and the Python
# extension twice (base, rq; d 192 bf16), a control copy of base. Float64-checked CLI runs (the first ones stop the
# call if they fail or hang), build_check, 400 ms stints with cuDNN interleaved where it takes the pair, two passes
# over (192, 128) non-causal and causal 1k..16k and d192 4k; the sm90 suites with the switch, racecheck and
# synccheck on the (192, 128) cases.
# Prediction: rq / base +0.5..+1.5% on the (192, 128) rows, +0..+1% at dv = 192 (8 of 12 steps).
# One H200 call (~7 minutes).
#   bash bench/integration/s35_rq192.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s35q
flags="-DFLASHATTN_SM90_REGISTER_Q_D192=1"
test_cli_build 192 "fp16;bf16" 6 "$flags" &
PY_DIMS=192 sm90_build_py base "" 5 300 &
PY_DIMS=192 sm90_build_py rq "$flags" 5 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/tests_configure.log
cli_or_stop "-b 2 --heads 8 --seqlen-q 3000 --seqlen-k 3000 --head-dim 192 --head-dim-v 128 --causal" || exit 1
cli_or_stop "-b 2 --heads 8 --heads-kv 2 --seqlen-q 2048 --seqlen-k 2048 --head-dim 192" || exit 1
cli_runs "-b 2 --heads 8 --seqlen-q 1000 --seqlen-k 1000 --head-dim 192 --head-dim-v 128 --dtype fp16" \
  "-b 1 --heads 8 --seqlen-q 8192 --seqlen-k 8192 --head-dim 192 --head-dim-v 128 --causal" \
  "-b 3 --heads 8 --seqlen-q 700 --seqlen-k 2500 --head-dim 192 --window 300,50"
cli_summary
sm90_ctrl_copy base
build_check_or_stop base,rq 192x128,192 500:500:0,1000:1000:0,777:3000:0,1024:1024:1,4096:4096:1 || exit 1
rm -f "$out"/py_*_build.log
for pass in 1 2; do
  sustained_rows base,ctrl,rq 192x128 0,1 1024,2048,4096,8192,16384 "p$pass" 400 260
  sustained_rows base,ctrl,rq 192 0,1 4096 "p$pass" 400 80
  log "stints p$pass"
done
sustained_summary base ctrl rq
race='*MatchesReference/cuda_sm90*d192_dv128*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 100
suites_summary
synccheck_on "$race" 40
log total
