#!/usr/bin/env bash
# Session 24: the by-sum softmax's exponentials before the previous block's P V wait (FLASHATTN_SM90_OVERLAP_BY_SUM=1,
# PROTOTYPE: d = dv = 128 only, an overflowed probability not recovered). Today the by-sum path waits for P V(j)
# before any of block j+1's softmax (it packs straight into P V's register operand), so a consumer's period is
# S + P V + softmax in sequence; FA3 overlaps the exponentials with its own P V. At 16k under ncu the tensor pipe
# is ~86% busy and the consumers wait ~16% of the loop on their own P V. Prediction: locked clocks -2..-5% time,
# free clocks +0..+3% (the power cap), the 4k row at least as much as 16k.
# One call (H200): d128 suites with the switch (fp16 + bf16; a failing large-score case would be the known hole),
# ncu time base / obs, A/B base / obs / control (three passes, causal and not, 1k-16k).
#   bash bench/integration/s24_obs.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s24o
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
test_cli_build "128" "fp16;bf16" 6 "-DFLASHATTN_SM90_OVERLAP_BY_SUM=1" &
PY_DIMS="128" sm90_build_py base "" 5 300 &
PY_DIMS="128" sm90_build_py obs "-DFLASHATTN_SM90_OVERLAP_BY_SUM=1" 5 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
suites_and_racecheck '*cuda_sm90*:*Sm90*' '*ForwardTest*cuda_sm90*128x217*' 150
suites_summary
PYTHONPATH=$bld/pyroot timeout 120 ncu --metrics gpu__time_duration.sum,smsp__inst_executed.sum,sm__cycles_active.avg \
  --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py --rows 128:0:4096,128:0:16384,128:1:4096 \
  --builds base,obs >"$out/ncu_obs.csv" 2>/dev/null
log "ncu rc=$?"
sm90_ctrl_copy
sm90_ab_passes "p1 base,obs,ctrl;p2 ctrl,obs,base;p3 obs,base,ctrl" "128" 1024,2048,4096,8192,16384 60 120
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base obs ctrl | tee -a "$out/summary.txt"
log total
