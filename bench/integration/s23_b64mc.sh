#!/usr/bin/env bash
# Session 23, sixth call (on 04df4f7; the switch and its instance were removed afterwards: s23_b64mc.patch, `git
# apply` on 9f8f8fa gives them back): the d256 masked cluster instance with 64-key blocks
# (FLASHATTN_SM90_D256_BLOCK64_MULTICAST_CAUSAL: K/V multicast by 32-row slices, causal problems from that many
# keys; default 0). Local SASS (d256 bf16): 168 registers, 8 B spills as the 64-key kernel, no C751x.
# Why: at causal 4k the 64-key kernel (placement clusters) and the 80-key multicast kernel read even
# (s23_b64.sh), at 2k the 64-key blocks won 3-4% (s23_short.sh); the multicast and the narrower blocks might add.
# Prediction: causal 4k / 8k / 16k +1..+3% with the switch at 4096. Measured: 0.987 / 0.992 / 0.984 of the mean
# of the default and its control (correct: suites, racecheck, synccheck, CLI runs); not kept.
# One call: default / switch 4096 / control over three passes at causal 4k / 8k / 16k (first: the A/B decides
# whether the rest matters), then d256 suites with the switch (fp16 + bf16; ForwardTest's 512 x 4100 causal and
# 512 x 4352 right-window cases then run the new instance), racecheck + synccheck on them, float64-checked CLI
# runs. Ask for an H200.
#   bash bench/integration/s23_b64mc.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s23m
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
flags="-DFLASHATTN_SM90_D256_BLOCK64_MULTICAST_CAUSAL=4096"
test_cli_build "256" "fp16;bf16" 8 "$flags" &
PY_DIMS="256" sm90_build_py base "" 4 400 &
PY_DIMS="256" sm90_build_py mc64 "$flags" 4 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
sm90_ctrl_copy
for pass in "p1 base,mc64,ctrl" "p2 ctrl,mc64,base" "p3 mc64,base,ctrl"; do
  sm90_ab "${pass%% *}" "${pass#* }" 256 1 4096,8192,16384 60 150
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base mc64 ctrl | tee -a "$out/summary.txt"
race='*ForwardTest*cuda_sm90*512x4100*:*ForwardTest*cuda_sm90*512x4352*:*ForwardSpread*cuda_sm90*d256*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 120
suites_summary
synccheck_on "$race"
cli_runs "--head-dim 256 --causal --seqlen-q 4096 -b 2 --heads 8" \
  "--head-dim 256 --causal --seqlen-q 8192 -b 1 --heads 8 --heads-kv 2 --dtype fp16 --sink" \
  "--head-dim 256 --causal --seqlen-q 4096 --seqlen-k 4200 -b 1 --heads 8 --softcap 30 --alibi" \
  "--head-dim 256 --window 900,0 --seqlen-q 4096 -b 1 --heads 8"
cli_summary
log total
