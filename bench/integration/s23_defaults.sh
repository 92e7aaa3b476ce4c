#!/usr/bin/env bash
# Session 23, second call: the two defaults taken from s23_next.sh's A/B (the d128 kernels with the per-tile mask
# range, FLASHATTN_SM90_TILE_MASK_RANGE=1; the d256 kernels on the by-sum softmax, RESCALE_BY_SUM=1 now covering
# d = dv = 256) verified: d 96 / 128 / 256 suites (fp16 + bf16), racecheck and synccheck on the d128 and d256
# spread and tail cases, float64-checked CLI runs through masked and windowed rows. Then two d256 leads against the
# new default and a control, three passes over the d256 rows:
#  tmr2: the mask range for every two-consumer kernel (TILE_MASK_RANGE=2; d256 bf16 local SASS: no spills beyond
#        the default's 8 B, -8..-16 static instructions per kernel). Predicted: causal +0.5..+1.5%, non-causal 0.
#  mf2:  d128's mask form (per-row bit masks, R2P) for the other kernels (MASK_FORM_OTHER=2; never timed at
#        d >= 192; +80..+100 static instructions, no spills). Predicted: causal 2k / 4k +0..+1%, 512 +1..+2%.
# Ask for an H200.
#   bash bench/integration/s23_defaults.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s23d
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
test_cli_build "96;128;256" "fp16;bf16" 7 "" &
PY_DIMS="256" sm90_build_py base "" 3 400 &
PY_DIMS="256" sm90_build_py tmr2 "-DFLASHATTN_SM90_TILE_MASK_RANGE=2" 3 400 &
PY_DIMS="256" sm90_build_py mf2 "-DFLASHATTN_SM90_MASK_FORM_OTHER=2" 3 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
race='*ForwardTest*cuda_sm90*128x217*:*ForwardSpread*cuda_sm90*d128*:*ForwardSpread*cuda_sm90*d256*:*ConsumerKeyRange*cuda_sm90_2[1-4]_*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 150
suites_summary
synccheck_on "$race" 90
cli_runs "--head-dim 128 --causal --seqlen-q 8192 -b 1 --heads 8" \
  "--head-dim 128 --causal --seqlen-q 3000 --seqlen-k 3333 -b 2 --heads 8 --dtype fp16" \
  "--head-dim 128 --window 300,200 --seqlen-q 3000 -b 2 --heads 8" \
  "--head-dim 128 --causal --varlen --seqlen-q 4096 -b 3 --heads 8 --softcap 30" \
  "--head-dim 128 --causal --seqlen-q 4096 -b 1 --heads 16 --heads-kv 2 --paged 256" \
  "--head-dim 96 --causal --seqlen-q 2048 -b 2 --heads 8 --alibi" \
  "--head-dim 256 --causal --seqlen-q 3000 -b 2 --heads 8 --alibi" \
  "--head-dim 256 --seqlen-q 8192 -b 1 --heads 8 --dtype fp16 --sink" \
  "--head-dim 256 --window 500,100 --seqlen-q 4000 -b 1 --heads 8 --softcap 30"
cli_summary
sm90_ctrl_copy
sm90_ab_passes "p1 base,tmr2,mf2,ctrl;p2 ctrl,mf2,tmr2,base;p3 tmr2,base,ctrl,mf2" "256" 512,1024,2048,4096,8192,16384 60 150
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base tmr2 mf2 ctrl | tee -a "$out/summary.txt"
log total
