#!/usr/bin/env bash
# Session 28, last call: O_OVER_V on by default for the unmasked d256 single-CTA kernels; masked problems launch
# masked instances of the same kernels without it (forward_launch.h), whose SASS matches the old default's
# instruction for instruction (4088 / 3848 dense, 4488 / 4256 paged). Steps: the tests / CLI (d256, fp16 + bf16)
# and the Python extension "new" (d64 / d128 / d256) of this tree, "base" (d256) with -DFLASHATTN_SM90_O_OVER_V=0;
# a causal CLI run first with a short limit, then float64-checked runs (causal, GQA non-causal 1000, non-causal
# 512); the suites, racecheck and synccheck (non-causal 80-key, windowed and causal cases); paired base / ctrl / new
# (three passes non-causal 512..16k, two passes causal 1k / 4k: those run the masked instances, expected 1.000);
# the grid (two rounds).
# Prediction: non-causal 512 / 1k / 2k / 4k +4 / +2 / +1 / +0.5% (s28_oov3.sh), 8k / 16k +0.1..+0.3%, causal +-0.3%.
# One H200 call (~5 minutes).
#   bash bench/integration/s28_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s28f
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
test_cli_build "256" "fp16;bf16" 6 "" &
PY_DIMS="64;128;256" sm90_build_py new "" 6 300 &
PY_DIMS="256" sm90_build_py base "-DFLASHATTN_SM90_O_OVER_V=0" 4 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
cli=$bld/tests/tools/cli/flashattn
timeout 40 "$cli" run --backend cuda_sm90 --repeat 2 --verify sample --head-dim 256 --causal --seqlen-q 4096 -b 1 \
  --heads 8 --heads-kv 8 >>"$out/cli.txt" 2>&1
rc=$?
log "cli causal 4096 rc=$rc"
if [[ $rc -ne 0 ]]; then
  tail -5 "$out/cli.txt" >>"$out/summary.txt"
  exit 1
fi
cli_runs "--head-dim 256 --seqlen-q 1000 -b 2 --heads 8 --heads-kv 2" \
  "--head-dim 256 --seqlen-q 512 -b 3 --heads 8 --heads-kv 8"
cli_summary
sm90_ctrl_copy
race='*Spread*cuda_sm90*300x1000*:*Spread*cuda_sm90*512x2304_b1_h2_d256_fp16*:*ConsumerKeyRange*480x510*:*Spread*cuda_sm90*512x4096*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 120
suites_summary
synccheck_on "$race" 60
rm -f "$out/racecheck.txt"
paired_passes base,ctrl,new 256 0 512,1024,2048,4096,8192,16384 3 120
paired_passes base,ctrl,new 256 1 1024,4096 2 60
paired_summary base ctrl new
compare_grid 2 200
log total
