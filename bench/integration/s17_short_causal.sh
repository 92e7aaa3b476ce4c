#!/usr/bin/env bash
# Prepared in session 16 (issue 6), run in session 17 on 3dcaa1a (an H200; records s17_short_causal_*): sections of one head for the
# dynamic schedule at short rows (FLASHATTN_SM90_HEAD_MAJOR_MASKED_MAX_SEQLEN, default 0), against the DRAM reads
# s16_h100_short.sh found at d256 causal 512 / 1k on an H100 (249 / 285 MB against cuDNN's 201 MB; ours / cuDNN at
# free clocks 0.89 / 0.97). Builds (d64 / d128 / d256, bf16): base, hm (=1024), hm2 (=2048), a control; ncu time and
# DRAM at d256 causal 512 / 1k / 2k for each build and cuDNN; A/B causal d256 512-4k, d128 / d64 512-2k beside
# cuDNN, three passes; the sm90 suites and float64-checked CLI runs with hm2 (the order is host-side: the kernels
# are base's).
# Prediction: d256 causal 512 / 1k DRAM near 201 MB, +2-5% on an H100 (+0.5-2% on an H200, where session 8's
# quarter / eighth-L2 sections read +0.9-1.2% at 512); 2k / 4k within the control (or worse: the longest-first
# order of a large section balances the tail, session 8 -3..-8% at 4k with small sections), d64 / d128 within
# +-2%. Note which card the call got (H100 or H200) beside the numbers.
#   bash bench/integration/s17_short_causal.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s17sc
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "$out"/tests.txt "$out"/cli.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
test_cli_build "64;128;256" "fp16;bf16" 7 "-DFLASHATTN_SM90_HEAD_MAJOR_MASKED_MAX_SEQLEN=2048" &
PY_DIMS="64;128;256" sm90_build_py base "" 3 400 &
PY_DIMS="64;128;256" sm90_build_py hm "-DFLASHATTN_SM90_HEAD_MAJOR_MASKED_MAX_SEQLEN=1024" 3 400 &
PY_DIMS="64;128;256" sm90_build_py hm2 "-DFLASHATTN_SM90_HEAD_MAJOR_MASKED_MAX_SEQLEN=2048" 3 400 &
wait
timeout 150 "$bld/tests/tests/flashattn_tests" --gtest_filter='*cuda_sm90*:*Sm90*:*TileSections*' --gtest_brief=1 \
  >"$out/tests.txt" 2>&1
log "sm90 suites rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
cli_runs "--head-dim 256 --causal --seqlen-q 512 -b 32 --heads 8" \
  "--head-dim 256 --causal --seqlen-q 1000 --seqlen-k 1500 -b 8 --heads 8 --heads-kv 2 --dtype fp16" \
  "--head-dim 128 --window=300,0 --seqlen-q 2048 -b 4 --heads 16" \
  "--head-dim 64 --causal --seqlen-q 1024 -b 16 --heads 32 --alibi" \
  "--head-dim 128 --causal --seqlen-q 8704 --seqlen-k 8504 -b 1 --heads 4"
# (the last: session 16's causal multicast kernel with more queries than keys, where the lower query block of the
# first cluster sees no key and its partner does; --verify sample scans every row for unwritten elements)
PYTHONPATH=$bld/pyroot timeout 90 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
  --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py --rows 256:1:512,256:1:1024,256:1:2048 \
  --builds base,hm,hm2 --cudnn >"$out/ncu.csv" 2>/dev/null
log "ncu rc=$?"
sm90_ctrl_copy
for pass in "p1 base,hm,hm2,ctrl" "p2 ctrl,hm2,hm,base" "p3 hm,base,ctrl,hm2"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 1 512,1024,2048,4096 60 150
  sm90_ab "$1" "$2" 128 1 512,1024,2048 60 150
  sm90_ab "$1" "$2" 64 1 512,1024,2048 60 150
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base hm hm2 ctrl | tee -a "$out/summary.txt"
log total
