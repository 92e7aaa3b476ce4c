#!/usr/bin/env bash
# Session 29, last call: PREFETCH_NEXT_TILE=1 (the next tile's Q prefetched into L2 in the 64-key kernels without O
# over V: masked d256 ones, the four-consumer d64 ones). s29_pf.sh read Q prefetch in every dense kernel at d256
# causal 1k / 4k +1.23 / +0.40%, d64 non-causal 512 +0.81%, and losses elsewhere (d256 non-causal -2..-3%); with =1
# those two families' kernels are SASS-identical to that build's, every other kernel to the default's. This call
# reads the rows those kernels run that s29_pf.sh did not (d64 non-causal 1k..8k, d64 causal 512..4k, d256 causal
# 512 / 2k) beside the ones it did, paired, three passes, control copy; the tests / CLI with =1 (d64 / d256, bf16)
# run the sm90 suites and a float64-checked CLI run first.
# Prediction: d256 causal 512..4k +0.4..+1.3%, d64 +0..+0.8%; no row below -0.3%.
# One H200 call (~3 minutes).
#   bash bench/integration/s29_pf2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s29q
out=${OUT:-$out}
test_cli_build "64;256" "bf16" 6 "-DFLASHATTN_SM90_PREFETCH_NEXT_TILE=1" &
PY_DIMS="64;256" sm90_build_py base "" 5 240 &
PY_DIMS="64;256" sm90_build_py sel "-DFLASHATTN_SM90_PREFETCH_NEXT_TILE=1" 5 240 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
cli_or_stop "--head-dim 256 --causal --seqlen-q 2048 -b 2 --heads 8 --heads-kv 8" || exit 1
timeout 60 "$bld/tests/tests/flashattn_tests" --gtest_filter='*cuda_sm90*:*Sm90*' --gtest_brief=1 >"$out/tests.txt" 2>&1
log "suites rc=$? $(tail -2 "$out/tests.txt" | tr '\n' ' ')"
suites_summary
sm90_ctrl_copy
paired_passes base,ctrl,sel 256 1 512,1024,2048,4096 3 80
paired_passes base,ctrl,sel 64 0 512,1024,2048,4096,8192 3 100
paired_passes base,ctrl,sel 64 1 512,1024,2048,4096 2 80
paired_summary base ctrl sel
log total
