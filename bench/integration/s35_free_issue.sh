#!/usr/bin/env bash
# Prepared in session 34 (not run yet): the d >= 192 kernels' consumers issuing their GEMM batches without taking
# turns (FLASHATTN_SM90_FREE_ISSUE_MIN_D=192: Config::kIssueTurns false, consumer.h wait_turn / pass_turn empty; the
# paged instances keep their turns). FlashAttention 3 drops its scheduler barrier for 16-bit types above d = 128; at
# d = 256 a block's GEMMs per consumer take ~3x its softmax, so the strict rotation mostly makes a consumer whose
# softmax is done wait for the other's issue. Local SASS (nvcc 13.0): the dense d256 kernels' BAR count 14-18 -> 2-3,
# no serialised wgmma, local-memory traffic as without.
# Builds: the C++ tests with the switch (d 192 / 256, fp16 + bf16) and the Python extension three times (base, free,
# and free80: free with causal 4k on the 80-key kernel, D256_BLOCK64_MAX_SEQLEN_MASKED=2048, since without turns the
# balance between 64- and 80-key blocks may move; d256 bf16), a control copy of base. Float64-checked CLI runs that stop the call if one fails or hangs, build_check, 400 ms
# stints with cuDNN interleaved, two passes over d256 non-causal 512..8k and causal 1k..16k; then the sm90 suites with
# the switch, racecheck and synccheck on the d256 Spread cases.
# Prediction: free / base +0.5..+2% on the d256 rows (more where the tiles are long), within noise at 512; free80 at
# causal 4k within 1% of free (with turns the 64-key kernel led by 1-3%).
# One H200 call (~8 minutes).
#   bash bench/integration/s35_free_issue.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s35f
flags="-DFLASHATTN_SM90_FREE_ISSUE_MIN_D=192"
test_cli_build "192;256" "fp16;bf16" 6 "$flags" &
PY_DIMS=256 sm90_build_py base "" 4 300 &
PY_DIMS=256 sm90_build_py free "$flags" 3 300 &
PY_DIMS=256 sm90_build_py free80 "$flags -DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=2048" 3 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/tests_configure.log
cli_or_stop "-b 2 --heads 8 --heads-kv 2 --seqlen-q 4096 --seqlen-k 4096 --head-dim 256 --causal" || exit 1
cli_or_stop "-b 2 --heads 8 --seqlen-q 3000 --seqlen-k 3000 --head-dim 192 --head-dim-v 128 --causal" || exit 1
cli_runs "-b 2 --heads 8 --seqlen-q 1000 --seqlen-k 1000 --head-dim 256 --dtype fp16" \
  "-b 1 --heads 8 --seqlen-q 8192 --seqlen-k 8192 --head-dim 256 --causal" \
  "-b 3 --heads 8 --seqlen-q 700 --seqlen-k 2500 --head-dim 256 --window 300,50"
cli_summary
sm90_ctrl_copy base
build_check_or_stop base,free,free80 256 500:500:0,1000:1000:0,777:3000:0,1024:1024:1,4096:4096:1,8192:8192:1 || exit 1
rm -f "$out"/py_*_build.log
for pass in 1 2; do
  sustained_rows base,ctrl,free 256 0 512,1024,2048,4096,8192 "p$pass" 400 110
  sustained_rows base,ctrl,free,free80 256 1 1024,2048,4096,8192,16384 "p$pass" 400 130
  log "stints p$pass"
done
sustained_summary base ctrl free free80
race='*Spread*cuda_sm90*4352*:*Spread*cuda_sm90*2304*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 100
suites_summary
synccheck_on "$race" 40
log total
