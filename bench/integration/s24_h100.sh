#!/usr/bin/env bash
# Session 24, on an H100 (ask for nvidia-h100-x1): (1) session 22's d64 by-sum softmax (RESCALE_BY_SUM_D64, default 1)
# against =0 and a control, two passes over the d64 rows (s23_h100_d64.sh, prepared in session 22; prediction
# +3..+10%, causal 512 even); (2) the forward grid of today's tree (compare.py, two rounds): the docs' H100 column
# is session 19's kernels.
#   bash bench/integration/s24_h100.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s24h
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS=64 sm90_build_py old "-DFLASHATTN_SM90_RESCALE_BY_SUM_D64=0" 6 400 &
PY_DIMS="64;128;256" sm90_build_py new "" 10 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy old
sm90_ab_passes "p1 old,new,ctrl;p2 ctrl,new,old" 64 512,1024,2048,4096,8192,16384 60 120
python3 bench/integration/ab_summary.py "$out/ab.jsonl" old new ctrl | tee -a "$out/summary.txt"
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 240 python3 bench/compare.py --modes fwd --rounds 2 \
  --out "$out" --tag "$(date +%Y%m%d-%H%M%S)-fwd-h100" >"$out/compare_fwd.log" 2>&1
log "compare fwd rc=$?"
sed -n '/^# /,$p' "$out/compare_fwd.log" | head -60
log total
