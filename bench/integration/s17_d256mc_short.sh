#!/usr/bin/env bash
# Session 17 (issue 6): the d256 causal K/V multicast below its default of 2048 keys, at the rows furthest below
# cuDNN on the H100 (final17.sh's grid: d256 causal 512 0.89, 1k 0.97; s16_h100_short.sh: 249 / 285 MB read from
# DRAM against cuDNN's 201 MB). Run with kind nvidia-h100-x1. Builds (d256): base (the default) and mc512
# (FLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=512); the d256 sm90 suites and racecheck with mc512 (every causal
# d256 case with >= 512 keys and a multiple of four query blocks takes the kernel); ncu time / DRAM / L2 at d256
# causal 512 / 1k for both and cuDNN; A/B base / mc512 / control beside cuDNN at 512 / 1k / 2k, three passes
# (2k: the same kernel in base and mc512).
# Prediction: L2 bytes about halved, DRAM down (the two CTAs of a cluster read each K/V block once), +0-3% at
# 1k; at 512 (4 query blocks: one couple per head, each cluster a head's whole work) -2..+3%: the H100's d128
# causal 2k lost 4.8% with multicast, the d256 2k gained 2.7%.
#   bash bench/integration/s17_d256mc_short.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s17ms
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "$out"/tests.txt "$out"/racecheck.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
flags="-DFLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=512"
test_build . "256" "fp16;bf16" "$flags" 6 &
PY_DIMS="256" sm90_build_py base "" 4 400 &
PY_DIMS="256" sm90_build_py mc512 "$flags" 4 400 &
wait
suites_and_racecheck '*cuda_sm90*d256*:*Sm90*' '*ForwardTest*cuda_sm90*d256*causal*:*Spread*cuda_sm90*d256*causal*' 150
PYTHONPATH=$bld/pyroot timeout 60 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum \
  --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py --rows 256:1:512,256:1:1024 \
  --builds base,mc512 --cudnn >"$out/ncu.csv" 2>/dev/null
log "ncu rc=$?"
sm90_ctrl_copy
for pass in "p1 base,mc512,ctrl" "p2 ctrl,mc512,base" "p3 mc512,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 1 512,1024,2048 60 100
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base mc512 ctrl | tee -a "$out/summary.txt"
log total
