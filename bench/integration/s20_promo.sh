#!/usr/bin/env bash
# Session 20: the tensor maps' L2 promotion (tensor_map.cu FLASHATTN_SM90_L2_PROMOTION). bench/stream_probe.cu on
# an H200 (this session, record s20_stream_probe2.jsonl): a warp-specialised TMA stream of the decode cache's K
# (two 128B-swizzled 64-column boxes per key block, rows 2 KB apart) reads 3.9-4.2 TB/s with the 256B
# promotion our maps use, whatever the stage count, block size or CTAs per SM, and 4.38-4.50 TB/s with 128B or
# none: the same as 16-byte cp.async (4.40-4.49) and as cuDNN's decode (4.47). Prediction: the decode rows
# 4.03 -> 4.35-4.45 TB/s (+8-10%, at or near cuDNN); the grid rows within +-1% where compute-bound (long rows),
# up to +2-5% at the 512 / 1k rows where DRAM runs at ~70% of peak (session 18). Ask for an H200.
#   bash bench/integration/s20_promo.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s20p
out=${OUT:-$out}  # results straight to $OUT: a call cut off at its limit still brings back what it measured
PY_DIMS="64;128;256" sm90_build_py base "" 8 400 &
PY_DIMS="64;128;256" sm90_build_py new "-DFLASHATTN_SM90_L2_PROMOTION=128" 8 400 &
wait
sm90_ctrl_copy
for pass in "p1 base,new,ctrl" "p2 ctrl,new,base"; do
  set -- $pass
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 100 python3 bench/decode_ab.py --builds "$2" --rep 60 2>&1 |
    grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" | tee -a "$out/decode.jsonl"
  log "decode $1"
done
for pass in "p1 base,new,ctrl" "p2 ctrl,new,base"; do
  set -- $pass
  for d in 128 64 256; do
    sm90_ab "$1" "$2" $d 1 512,1024,2048,4096,8192,16384 60 100
    sm90_ab "$1" "$2" $d 0 512,1024,2048,4096,8192,16384 60 100
  done
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base new ctrl | tee -a "$out/summary.txt"
log total
