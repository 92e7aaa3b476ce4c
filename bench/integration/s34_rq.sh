#!/usr/bin/env bash
# Ran in session 34 on a176a5c (REGISTER_Q default 0 then; now 1, so on a later tree base and rq are the same
# kernels: pass -DFLASHATTN_SM90_REGISTER_Q=0 to base to repeat it).
# Session 34: S = Q K^T with Q's A fragments in registers in the d = dv = 128 two-consumer kernels
# (FLASHATTN_SM90_REGISTER_Q=1: consumer.h load_q_fragments / gemm_qk_register_q; the paged instance keeps Q in
# shared memory). Session 7 measured an earlier form at -2.2% cycles under ncu's locked clocks, -5.2% instructions and
# the shared-memory pipe 48 -> 40% busy, but neutral at free clocks in a timing whose control spread was 4-6%; since
# then the power cap was found to decide (energy per FLOP), and a third of the S GEMM's shared-memory operand bytes is
# energy. Local SASS (nvcc 13.0): no spill or C751x added, 16 LDSM per kernel, 8-24 fewer instructions.
# Builds: the C++ tests + CLI with the switch (d 96 / 128, fp16 + bf16) and the Python extension twice (base, rq;
# d128 bf16), a control copy of base. Then a float64-checked CLI run that stops the call if it fails or hangs,
# bench/build_check.py (base, rq) on ragged and causal shapes, 400 ms stints with cuDNN interleaved, two passes over
# d128 non-causal 1k..16k and causal 2k..16k, and last the sm90 suites with the switch (d 96 / 128), racecheck and
# synccheck on the multicast Spread cases.
# Prediction: rq / base +0.5..+1.5% from 4k (non-causal and causal), within noise at 1k-2k.
# One H200 call (~8 minutes).
#   bash bench/integration/s34_rq.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s34rq
flags="-DFLASHATTN_SM90_REGISTER_Q=1"
test_cli_build "96;128" "fp16;bf16" 8 "$flags" &
PY_DIMS=128 sm90_build_py base "" 4 300 &
PY_DIMS=128 sm90_build_py rq "$flags" 4 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/tests_configure.log
cli_or_stop "-b 2 --heads 16 --heads-kv 4 --seqlen-q 3000 --seqlen-k 3000 --head-dim 128 --causal" || exit 1
cli_runs "-b 1 --heads 8 --seqlen-q 777 --seqlen-k 4500 --head-dim 96 --dtype fp16" \
  "-b 1 --heads 8 --seqlen-q 8192 --seqlen-k 8192 --head-dim 128 --causal"
cli_summary
sm90_ctrl_copy base
build_check_or_stop base,rq 128 1000:1000:0,1024:1024:0,2048:2048:1,777:3000:0,4200:4200:1,8192:8192:0,8192:8192:1 || exit 1
rm -f "$out"/py_*_build.log
for pass in 1 2; do
  sustained_rows base,ctrl,rq 128 0 1024,2048,4096,8192,16384 "p$pass" 400 110
  sustained_rows base,ctrl,rq 128 1 2048,4096,8192,16384 "p$pass" 400 100
  log "stints p$pass"
done
sustained_summary base ctrl rq
race='*Spread*cuda_sm90*2304*:*Spread*cuda_sm90*x8192*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 130
suites_summary
synccheck_on "$race" 50
log total
