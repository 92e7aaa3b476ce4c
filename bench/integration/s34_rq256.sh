#!/usr/bin/env bash
# Session 34: Q's first four k-steps (its first 64 columns) from registers in the masked instances of the d = dv =
# 256 two-consumer kernels (FLASHATTN_SM90_REGISTER_Q_D256=4: the causal and windowed d256 rows, 64-key blocks to
# 4k keys, 80-key blocks with K/V multicast beyond). The d128 kernels' whole Q in registers read +0.6% (s34_rq.sh,
# s34_rq2.sh); at d256 only 16 more registers fit beside O's 128 without new local-memory traffic (local SASS), a
# quarter of the S GEMM's Q operand bytes, ~6% of a block's shared-memory operand bytes (d128: ~20%).
# Builds: the C++ tests with the switch (d 256, fp16 + bf16) and the Python extension twice (base, q4; d256 bf16),
# a control copy of base; build_check on causal and windowed-like shapes; 400 ms stints with cuDNN interleaved, two
# passes over d256 causal 1k / 2k / 4k / 8k / 16k; then the sm90 suites with the switch, racecheck and synccheck on
# the d256 multicast Spread case.
# Prediction: q4 / base +0.1..+0.5% (a quarter of d128's operand saving), within the control's spread.
# One H200 call (~5 minutes).
#   bash bench/integration/s34_rq256.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s34q
flags="-DFLASHATTN_SM90_REGISTER_Q_D256=4"
test_build . 256 "fp16;bf16" "$flags" 6 &
PY_DIMS=256 sm90_build_py base "" 5 300 &
PY_DIMS=256 sm90_build_py q4 "$flags" 5 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/tests_configure.log
sm90_ctrl_copy base
build_check_or_stop base,q4 256 1000:1000:1,2048:2048:1,4096:4096:1,4200:4200:1,8192:8192:1 || exit 1
rm -f "$out"/py_*_build.log
for pass in 1 2; do
  sustained_rows base,ctrl,q4 256 1 1024,2048,4096,8192,16384 "p$pass" 400 110
  log "stints p$pass"
done
sustained_summary base ctrl q4
race='*Spread*cuda_sm90*4352*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 90
suites_summary
synccheck_on "$race" 40
log total
