#!/usr/bin/env bash
# Session 8, integrator: smaller L2 sections for the d256 kernels' dynamic schedules (causal / windowed / varlen),
# helper sm90o's lead for causal d256 at 512 / 1k (0.93 / 0.97 of cuDNN). sm90t's 1/8-L2 sections gave d128 causal
# 512 +3% and were not tried at d256. Python extensions of this tree (90a, bf16, d256, forward only) differing only
# by FLASHATTN_SM90_SECTION_L2_DIVISOR_D256: base = 2 (half of L2, the default), q4 = 4, new = 8; ctrl = base's
# extension a second time. bench/sm90s_ab.py, all builds + cuDNN in one process, each row forward then reverse
# order; three passes.
#   DEADLINE=230 timeout 250 bash bench/integration/s8_d256_sections.sh
# RECORD: ran at 1fae551; the switch was removed afterwards (the d256 kernels keep half of L2, forward_config.h).
set -uo pipefail
out=/tmp/s8sec-out
bld=/tmp/s8sec-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld"
trap 'tar -C /tmp -czf "${OUT:-/tmp}/s8sec-out.tgz" s8sec-out' EXIT
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
left() { echo $((${DEADLINE:-230} - ($(date +%s) - t0))); }
cap() { local l; l=$(left); echo $(($1 < l ? $1 : (l > 1 ? l : 1))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >"$out/gpu.txt" 2>&1
py=$(command -v python3)
source bench/sm90_device_common.sh
PY_DIMS=256 sm90_build_py base "" 5 "$(cap 150)" &
PY_DIMS=256 sm90_build_py q4 -DFLASHATTN_SM90_SECTION_L2_DIVISOR_D256=4 5 "$(cap 150)" &
PY_DIMS=256 sm90_build_py new -DFLASHATTN_SM90_SECTION_L2_DIVISOR_D256=8 5 "$(cap 150)" &
wait
cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctrl" &&
  sed -i 's/"flashattn_base::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py"
for pass in 1 2 3; do
  start=$(date +%s)
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "$(cap 40)" python3 bench/sm90s_ab.py --builds base,q4,new,ctrl \
    --hdims 256 --causal 1 --seqlens 512,1024,2048,4096 --rep 40 2>&1 | grep -v Warning | tee -a "$out/ab.jsonl"
  log "pass $pass rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"
done
log total
