#!/usr/bin/env bash
# Session 18 (issue 6), EXPERIMENT: clusters of two for unmasked short rows (forward_config.h
# FLASHATTN_SM90_PLACEMENT_UNMASKED_MAX_SEQLEN, default 0): on the static schedule in sections of one head, a
# cluster's two CTAs hold adjacent query blocks of one head. The causal d256 placement (kept this session) cut
# L2 fabric sectors 8.5 -> 6.0 M and DRAM reads 248 -> 209 MB at 512 keys on an H100 (+6%); non-causal d256 /
# d128 512 read 0.988 / 0.994 of cuDNN there. Run with kind nvidia-h100-x1.
# Builds (d64 / d128 / d256, bf16): base (this tree), pu (PLACEMENT_UNMASKED_MAX_SEQLEN 1024), a control.
#  1. correctness of pu: the sm90 GPU suites, racecheck on non-causal d256 / d64 cases, float64-checked CLI runs;
#  2. ncu: time, DRAM reads, L2 fabric sectors at non-causal d256 / d128 / d64 512, base and pu, beside cuDNN;
#  3. A/B base / pu / control beside cuDNN at non-causal d256 / d128 / d64 512 and 1k, three passes.
# Prediction: fabric sectors down by a third and DRAM reads toward 201 MB at d256 512; pu / base +1-3% at
# d256 512, less at d128 / d64 and at 1k.
#   bash bench/integration/s18_placement_unmasked.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s18pu
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "$out"/tests.txt "$out"/cli.txt "$out"/racecheck.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
pu="-DFLASHATTN_SM90_PLACEMENT_UNMASKED_MAX_SEQLEN=1024"
test_cli_build "64;128;256" "bf16;fp16" 4 "$pu" &
PY_DIMS="64;128;256" sm90_build_py base "" 5 400 &
PY_DIMS="64;128;256" sm90_build_py pu "$pu" 5 400 &
wait
suites_and_racecheck '*cuda_sm90*:*Sm90*' '*ForwardTest*cuda_sm90*512x512*full*:*ForwardTest*cuda_sm90*d256*full*' 150
cli_runs "--head-dim 256 --seqlen-q 512 -b 32 --heads 8" \
  "--head-dim 128 --seqlen-q 1024 -b 8 --heads 16 --heads-kv 4 --dtype fp16" \
  "--head-dim 64 --seqlen-q 512 --seqlen-k 1000 -b 8 --heads 16 --alibi" \
  "--head-dim 256 --seqlen-q 768 --seqlen-k 640 -b 4 --heads 8 --softcap 30 --sink"
PYTHONPATH=$bld/pyroot timeout 90 ncu --metrics \
  gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_bytes.sum \
  --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py \
  --rows 256:0:512,128:0:512,64:0:512 --builds base,pu --cudnn >"$out/ncu.csv" 2>/dev/null
log "ncu rc=$?"
sm90_ctrl_copy
for pass in "p1 base,pu,ctrl" "p2 ctrl,pu,base" "p3 pu,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 0 512,1024 60 60
  sm90_ab "$1" "$2" 128 0 512,1024 60 60
  sm90_ab "$1" "$2" 64 0 512,1024 60 60
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base pu ctrl | tee -a "$out/summary.txt"
log total
