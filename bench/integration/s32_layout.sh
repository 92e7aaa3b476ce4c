#!/usr/bin/env bash
# Session 32 (issue 6): s32_sweep.sh read d256 causal 4k at batch 1, 32 heads 647 TFLOP/s where s32_rounds.sh read
# the grid's batch 4, 8 heads at 624 (the same 512 static couples, the same plan: it depends on batch x heads
# only), d128 non-causal 8k at 1 x 32 678 against the grid's 2 x 16 at 658; cuDNN unmoved. So the layout (row
# stride h x d, batch stride), not the rounds, moved those rows. This call: (1) bench/rounds_probe.py, shapes of
# the same batch x heads in one set of interleaved stints (d256 causal 4k 4x8 / 1x32 / 2x16 / 8x4, d128 non-causal
# 8k 2x16 / 1x32 / 4x8, d256 causal 8k 2x8 / 1x16, d128 causal 16k 1x16 / 2x8, d256 non-causal 1k 16x8 / 4x32);
# (2) ncu (base clocks and free clocks) of d256 causal 4k 4x8 against 1x32, ours and cuDNN: time, DRAM and L2
# bytes, L2 hit rate, L2 fabric sectors.
# Prediction: (1) the grid's shape below the others by 2-4% at d256 causal 4k; (2) under ncu the grid's shape
# with more DRAM bytes or fabric sectors (a layout effect on L2 placement).
# Result (s32_layout.jsonl, s32_layout_ncu.txt): d256 causal 4k 4x8 / 1x32 / 2x16 / 8x4 656.8 / 658.2 / 652.0 /
# 658.5 (the grid shape as fast as the others here), d128 non-causal 8k 2x16 / 1x32 / 4x8 678.6 / 673.4 / 678.4, d256
# causal 8k 716.2 / 697.5, d128 causal 16k 668.6 / 645.8, d256 non-causal 1k 667.1 / 658.6. ncu, one launch: 4x8 and
# 1x32 within 0.5% at base and free clocks (ours 454 / 372 us, cuDNN 574 / 453 us; ours reads 214 MB from DRAM, 2.63 GB
# through L2 and 7.3 M fabric sectors against cuDNN's 201 MB, 2.33 GB, 6.1 M).
# One H200 call (~4 minutes).
#   bash bench/integration/s32_layout.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s32l
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS="128;256" sm90_build_py base "" 16 300
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
PYTHONPATH=$bld/pyroot:bench PYTHONUNBUFFERED=1 timeout 300 python3 bench/rounds_probe.py --build base --rounds 3 \
  --sweep 256:1:4096:4x8/1x32/2x16/8x4,128:0:8192:2x16/1x32/4x8,256:1:8192:2x8/1x16,128:1:16384:1x16/2x8,256:0:1024:16x8/4x32 \
  >"$out/layout.jsonl" 2>"$out/layout.err"
log "layout sweep rc=$?"
tail -3 "$out/layout.err" >>"$out/summary.txt"
metrics="gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct"
metrics+=",lts__t_sectors_srcunit_ltcfabric.sum,sm__cycles_elapsed.avg.per_second"
for cc in base none; do
  PYTHONPATH=$bld/pyroot:bench timeout 120 ncu --clock-control "$cc" --metrics "$metrics" --profile-from-start off \
    --csv --page raw python3 bench/ncu_grid_target.py --rows 256:1:4096:4:8,256:1:4096:1:32 --builds base --cudnn \
    >"$out/ncu_$cc.csv" 2>"$out/ncu_err.txt"
  log "ncu clock-control $cc rc=$? $(tail -1 "$out/ncu_err.txt")"
done
log total
