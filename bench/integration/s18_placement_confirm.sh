#!/usr/bin/env bash
# Session 18 (issue 6): the placement clusters as a default (forward_config.h FLASHATTN_SM90_PLACEMENT_MAX_SEQLEN
# 1024: causal d256 rows up to 1024 keys on static couples in clusters of two, a head's couples together;
# TileSections couples_by_pair, decoded by section_unit on every kernel). s18_placement.sh measured the
# diagnostic (every causal shape, a separate decode) on an H100: causal d256 512 +6.0%, 1k +3.6%.
# Builds (d64 / d128 / d256, bf16): base (a5c5888's src: s18_placement_confirm.patch reversed), off (this tree
# with PLACEMENT_MAX_SEQLEN 0: the decode's cost alone), new (this tree), a control.
#  1. correctness of new: the sm90 GPU suites and TileSections (forward_test's new cases 3 x 512 x 384 GQA and
#     1024 right-window fp16), racecheck on the d256 causal cases, float64-checked CLI runs (512 / 768 / 1024
#     keys, GQA, sq != sk both ways, ALiBi, sink, softcap, fp16);
#  2. ncu: time, DRAM reads, L2 fabric sectors at causal d256 512 / 1k, base and new, beside cuDNN;
#  3. A/B base / off / new / control beside cuDNN: causal d256 512 / 1k / 2k, d128 512 / 2k, d64 1k; non-causal
#     d256 512, d128 8k, d64 4k; three passes.
# Prediction: new / base at causal d256 512 +4-7%, 1k +2-4% (the H100's +6.0 / +3.6%; an H200 unmeasured);
# off / base and new / base elsewhere within the control's spread (+24..32 SASS instructions a kernel, no
# register or spill change). Note the card.
#   bash bench/integration/s18_placement_confirm.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s18plc
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "$out"/tests.txt "$out"/cli.txt "$out"/racecheck.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
tree_copy "$bld/base-tree" bench/integration/s18_placement_confirm.patch -R
test_cli_build "64;128;256" "bf16;fp16" 4 &
(cd "$bld/base-tree" && PY_DIMS="64;128;256" sm90_build_py base "" 4 400) &
PY_DIMS="64;128;256" sm90_build_py off "-DFLASHATTN_SM90_PLACEMENT_MAX_SEQLEN=0" 4 400 &
PY_DIMS="64;128;256" sm90_build_py new "" 4 400 &
wait
suites_and_racecheck '*cuda_sm90*:*Sm90*:*TileSections*' \
  '*ForwardTest*cuda_sm90*d256*causal*:*ForwardTest*cuda_sm90*d256*right*' 150
cli_runs "--head-dim 256 --causal --seqlen-q 512 -b 32 --heads 8" \
  "--head-dim 256 --causal --seqlen-q 1024 -b 8 --heads 8 --heads-kv 2 --dtype fp16" \
  "--head-dim 256 --causal --seqlen-q 768 --seqlen-k 1024 -b 4 --heads 8 --alibi" \
  "--head-dim 256 --causal --seqlen-q 1024 --seqlen-k 640 -b 4 --heads 8 --sink" \
  "--head-dim 256 --causal --seqlen-q 512 -b 16 --heads 16 --heads-kv 4 --softcap 30" \
  "--head-dim 256 --window=-1,32 --seqlen-q 1024 -b 4 --heads 8 --dtype fp16"
PYTHONPATH=$bld/pyroot timeout 90 ncu --metrics \
  gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_bytes.sum \
  --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py \
  --rows 256:1:512,256:1:1024 --builds base,new --cudnn >"$out/ncu.csv" 2>/dev/null
log "ncu rc=$?"
sm90_ctrl_copy
for pass in "p1 base,off,new,ctrl" "p2 ctrl,new,off,base" "p3 new,base,ctrl,off"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 1 512,1024,2048 60 100
  sm90_ab "$1" "$2" 128 1 512,2048 60 80
  sm90_ab "$1" "$2" 64 1 1024 60 60
  sm90_ab "$1" "$2" 256 0 512 60 60
  sm90_ab "$1" "$2" 128 0 8192 60 80
  sm90_ab "$1" "$2" 64 0 4096 60 60
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base off new ctrl | tee -a "$out/summary.txt"
log total
