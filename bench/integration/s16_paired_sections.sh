#!/usr/bin/env bash
# PREPARED in session 15 (issue 6), not run (the session's device time was spent): paired causal tiles
# (FLASHATTN_SM90_PAIRED_TILES, kept in session 15 for one-kv-head L2 sections only) on shorter rows, by making the
# half-L2 kernels' sections smaller so that they hold one kv head there too: FLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER=4
# (12.5 MB sections on a 50 MB L2: one d256 head from 8k keys, one d64 head from 16k) and =8 (6.25 MB: d256 from
# 4k, d64 from 8k). Session 15 measured the two levers apart: pairing with several heads per section lost (d256
# causal 8k -1.4%, d64 causal 16k -2%, DRAM up), smaller sections without pairing were noise (quarter L2 at d256
# causal 2k / 4k / 8k 0.971 / 1.007 / 0.956, control 0.978 / 0.997 / 1.022); together they give the couples the
# one-head sections that took d256 causal 16k from 741 to 295 MB of DRAM reads (+2.6 / +3.1%).
# Builds (d64 + d256, bf16): base (default), q4 (=4), q8 (=8), a control; causal rows 2k-16k, three passes beside
# cuDNN; ncu DRAM reads at d256 causal 4k / 8k and d64 causal 16k for each build.
# Prediction: d256 causal 8k (q4, q8) and 4k (q8) +1-3% with DRAM near Q + K + V; d64 causal 8k / 16k (q8) within
# +-2% (d64's DRAM reads were 1.4x the minimum to begin with); 2k rows (several heads per section in every build)
# within the control.
#   bash bench/integration/s16_paired_sections.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s16ps
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "${OUT:-/tmp}/" 2>/dev/null' EXIT
PY_DIMS="64;256" sm90_build_py base "" 5 400 &
PY_DIMS="64;256" sm90_build_py q4 "-DFLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER=4" 5 400 &
PY_DIMS="64;256" sm90_build_py q8 "-DFLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER=8" 5 400 &
wait
for b in base q4 q8; do
  PYTHONPATH=$bld/pyroot timeout 90 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
    --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py --rows 256:1:4096,256:1:8192,64:1:16384 \
    --builds $b >"$out/ncu_$b.csv" 2>/dev/null
  log "ncu $b rc=$?"
done
sm90_ctrl_copy
for pass in "p1 base,q4,q8,ctrl" "p2 ctrl,q8,q4,base" "p3 q4,base,ctrl,q8"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 1 2048,4096,8192,16384 60 150
  sm90_ab "$1" "$2" 64 1 4096,8192,16384 60 150
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base q4 q8 ctrl | tee -a "$out/summary.txt"
log total
