#!/usr/bin/env bash
# Session 20: the 128B L2 promotion's effect on the H100 decode (s20_promo.sh measured it on an H200: +7.5-10%).
# The H100's decode read ~90% of its DRAM peak with the 256B promotion (session 19), so less is left: predicted
# +0-4%. Ask for nvidia-h100-x1.
#   bash bench/integration/s20_promo_h100.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s20h
out=${OUT:-$out} # results straight to $OUT
sm90_build_py base256 "-DFLASHATTN_SM90_L2_PROMOTION=256" 8 200 &
sm90_build_py new "" 8 200 &
wait
rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn" "$bld/pyroot/flashattn_ctrl" &&
  sed -i 's/"flashattn::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py"
for pass in "p1 base256,new,ctrl" "p2 ctrl,new,base256"; do
  set -- $pass
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 60 python3 bench/decode_ab.py --builds "$2" --rep 60 2>&1 |
    grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" | tee -a "$out/decode.jsonl"
  log "decode $1"
done
log total
