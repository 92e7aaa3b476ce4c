#!/usr/bin/env bash
# Session 18 (issue 6), EXPERIMENT: the next tile's Q fetched into L2 by the producer once the current tile's key
# blocks are issued (forward_config.h FLASHATTN_SM90_PREFETCH_NEXT_Q, default 0; ptx tma_prefetch_l2_4d). Why:
# s18_clocks_short.sh found the H100's short rows trailing cuDNN by more at free clocks (1.7-6.5%) than at base
# clocks (0-3.4%) with equal DRAM bytes: latency at the tile boundaries, where each tile's Q comes from DRAM.
# Builds (d64 / d128 / d256, bf16): base, pf (PREFETCH_NEXT_Q 1), a control. Run with kind nvidia-h100-x1.
#  1. correctness of pf: the sm90 GPU suites, racecheck on causal d256 / non-causal d128 cases, float64 CLI runs;
#  2. A/B base / pf / control beside cuDNN: causal d256 / d128 / d64 512, d256 1k, d128 2k; non-causal d128 / d256
#     512, d128 8k; three passes.
# Prediction: pf / base +1-4% at the 512 rows (most at causal d256, where Q's load waits for the O store), within
# the control at 2k and 8k. Local SASS: no register or spill change (the prefetch sits after the key-block loop;
# inside it the 24-register producer spilled).
#   bash bench/integration/s18_prefetch_q.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s18pf
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/tests.txt "$out"/cli.txt "$out"/racecheck.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
pf="-DFLASHATTN_SM90_PREFETCH_NEXT_Q=1"
test_cli_build "64;128;256" "bf16;fp16" 4 "$pf" &
PY_DIMS="64;128;256" sm90_build_py base "" 5 400 &
PY_DIMS="64;128;256" sm90_build_py pf "$pf" 5 400 &
wait
suites_and_racecheck '*cuda_sm90*:*Sm90*' '*ForwardTest*cuda_sm90*d256*causal*:*ForwardTest*cuda_sm90*512x512*' 150
cli_runs "--head-dim 256 --causal --seqlen-q 512 -b 32 --heads 8" \
  "--head-dim 128 --seqlen-q 512 -b 32 --heads 16 --dtype fp16" \
  "--head-dim 64 --causal --seqlen-q 1000 --seqlen-k 1100 -b 8 --heads 16 --heads-kv 4" \
  "--head-dim 128 --seqlen-q 8192 -b 2 --heads 16 --alibi"
sm90_ctrl_copy
for pass in "p1 base,pf,ctrl" "p2 ctrl,pf,base" "p3 pf,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 1 512,1024 60 60
  sm90_ab "$1" "$2" 128 1 512,2048 60 60
  sm90_ab "$1" "$2" 64 1 512 60 40
  sm90_ab "$1" "$2" 128 0 512,8192 60 80
  sm90_ab "$1" "$2" 256 0 512 60 40
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base pf ctrl | tee -a "$out/summary.txt"
log total
