#!/usr/bin/env bash
# PREPARED in session 17 (issue 6), not run (the session's device time was spent): the placement diagnostic
# (forward_config.h FLASHATTN_SM90_PLACEMENT_CLUSTERS, default 0). s17_l2_short.sh (H100, ncu) found d256 causal
# 512 reading exactly cuDNN's bytes from L2 into the SMs but 8.9 M sectors between the two L2 partitions against
# cuDNN's 5.3 M and 251 MB from DRAM against 201 MB. Question: does putting a head's tiles on the SMs of one GPC
# (a cluster of two CTAs the kernel does not use, static couples ordered by head: at 512 keys a cluster holds a
# head's four tiles) remove both, and is the time worth it? Run with kind nvidia-h100-x1.
# Builds (d64 / d128 / d256, bf16): base, sc (FLASHATTN_SM90_STATIC_COUPLES=1: the order pc needs, without the
# clusters; s16: d256 causal 512 0.945 on an H100), pc (sc + PLACEMENT_CLUSTERS=1), a control.
#  1. correctness of pc: the sm90 GPU suites and TileSections with pc's flags, racecheck on causal cases,
#     float64-checked CLI runs on causal rows of 512-2k keys (GQA, sq != sk, fp16);
#  2. ncu: time, DRAM reads, L2 fabric sectors, L2 -> SM bytes at causal d256 512 / 1k, d128 / d64 512, for
#     base, sc, pc and cuDNN;
#  3. A/B base / sc / pc / control beside cuDNN at causal d256 512 / 1k / 2k, d128 and d64 512 / 1k, three passes.
# Prediction: pc's fabric sectors at d256 512 near cuDNN's (5-6 M) and DRAM reads near 201 MB; pc / sc +2-5% at
# d256 512, less at 1k (a cluster then holds half a head's couples); pc / base -3..+2% (sc's loss is the
# longest-first order's). If fabric and DRAM fall and the time does not move, placement is not the lever.
#   bash bench/integration/s18_placement.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s18pl
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "$out"/tests.txt "$out"/cli.txt "$out"/racecheck.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
pc="-DFLASHATTN_SM90_STATIC_COUPLES=1 -DFLASHATTN_SM90_PLACEMENT_CLUSTERS=1"
test_cli_build "64;128;256" "bf16;fp16" 4 "$pc" &
PY_DIMS="64;128;256" sm90_build_py base "" 4 400 &
PY_DIMS="64;128;256" sm90_build_py sc "-DFLASHATTN_SM90_STATIC_COUPLES=1" 4 400 &
PY_DIMS="64;128;256" sm90_build_py pc "$pc" 4 400 &
wait
suites_and_racecheck '*cuda_sm90*:*Sm90*:*TileSections*' \
  '*ForwardTest*cuda_sm90*causal*:*ConsumerKeyRange*d256*causal*' 150
cli_runs "--head-dim 256 --causal --seqlen-q 512 -b 32 --heads 8" \
  "--head-dim 256 --causal --seqlen-q 1024 -b 8 --heads 8 --heads-kv 2 --dtype fp16" \
  "--head-dim 256 --causal --seqlen-q 768 --seqlen-k 1024 -b 4 --heads 8 --alibi" \
  "--head-dim 128 --causal --seqlen-q 512 -b 32 --heads 16" \
  "--head-dim 64 --causal --seqlen-q 2048 -b 8 --heads 32 --sink"
PYTHONPATH=$bld/pyroot timeout 120 ncu --metrics \
  gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_bytes.sum \
  --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py \
  --rows 256:1:512,256:1:1024,128:1:512,64:1:512 --builds base,sc,pc --cudnn >"$out/ncu.csv" 2>/dev/null
log "ncu rc=$?"
sm90_ctrl_copy
for pass in "p1 base,sc,pc,ctrl" "p2 ctrl,pc,sc,base" "p3 pc,base,ctrl,sc"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 1 512,1024,2048 60 100
  sm90_ab "$1" "$2" 128 1 512,1024 60 80
  sm90_ab "$1" "$2" 64 1 512,1024 60 80
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base sc pc ctrl | tee -a "$out/summary.txt"
log total
