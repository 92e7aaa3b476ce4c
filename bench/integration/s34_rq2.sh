#!/usr/bin/env bash
# Ran in session 34 on 511be69; REGISTER_Q=2 was removed afterwards (cabfcdf), so on a later tree rq2 builds =1.
# Session 34, second call: FLASHATTN_SM90_REGISTER_Q=2 (each tile's first S GEMM from shared memory, Q's fragments
# loaded after its issue, the other S GEMMs from registers) beside =1 (every S GEMM from registers, the fragments
# loaded before the first one). s34_rq.sh read =1 at +0.5..+1.7% over base and control from 2k (non-causal) / 4k
# (causal), but 1k non-causal at 0.976 in both passes (control 0.965 / 0.994) and causal 2k at 0.994: at the tile
# boundary the eight ldmatrix.x4 sit between Q's arrival and the first S, which short tiles feel most.
# Builds: the C++ tests + CLI with =2 (d 96 / 128, fp16 + bf16); the Python extension three times (base, rq1, rq2;
# d128 bf16) and a control copy of base. A float64-checked CLI run that stops the call if it fails, build_check
# (base, rq1, rq2), 400 ms stints with cuDNN interleaved, two passes: d128 non-causal 512 / 1k / 2k / 4k / 16k,
# causal 512 / 1k / 2k / 4k / 8k; then the sm90 suites with =2, racecheck and synccheck on the multicast Spread cases.
# Prediction: rq2 at or above base at 512-2k (both masks), within 0.3% of rq1 from 4k.
# One H200 call (~7 minutes).
#   bash bench/integration/s34_rq2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s34rq2
test_cli_build "96;128" "fp16;bf16" 7 "-DFLASHATTN_SM90_REGISTER_Q=2" &
PY_DIMS=128 sm90_build_py base "" 3 300 &
PY_DIMS=128 sm90_build_py rq1 "-DFLASHATTN_SM90_REGISTER_Q=1" 3 300 &
PY_DIMS=128 sm90_build_py rq2 "-DFLASHATTN_SM90_REGISTER_Q=2" 3 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/tests_configure.log
cli_or_stop "-b 2 --heads 16 --heads-kv 4 --seqlen-q 3000 --seqlen-k 3000 --head-dim 128 --causal" || exit 1
cli_runs "-b 1 --heads 8 --seqlen-q 777 --seqlen-k 4500 --head-dim 96 --dtype fp16" \
  "-b 3 --heads 8 --seqlen-q 100 --seqlen-k 300 --head-dim 128 --window 40,0"
cli_summary
sm90_ctrl_copy base
build_check_or_stop base,rq1,rq2 128 500:500:0,1000:1000:0,1024:1024:1,2048:2048:1,777:3000:0,4200:4200:1,8192:8192:0 || exit 1
rm -f "$out"/py_*_build.log
for pass in 1 2; do
  sustained_rows base,ctrl,rq1,rq2 128 0 512,1024,2048,4096,16384 "p$pass" 400 110
  sustained_rows base,ctrl,rq1,rq2 128 1 512,1024,2048,4096,8192 "p$pass" 400 110
  log "stints p$pass"
done
sustained_summary base ctrl rq1 rq2
race='*Spread*cuda_sm90*2304*:*Spread*cuda_sm90*x8192*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 100
suites_summary
synccheck_on "$race" 40
log total
