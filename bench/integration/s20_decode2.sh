#!/usr/bin/env bash
# Session 20, after the L2 promotion (tensor_map.cu, now 128B): does the decode kernel's shape matter now that
# the TMA stream is no longer capped? base256 = the tree with the old 256B promotion, new = this tree, c2 = this
# tree with two one-consumer CTAs per SM (FLASHATTN_SM90_SINGLE_CONSUMER_CTAS=2: 64-key blocks; read +3.3% at
# b16 32k and -1% at b64 8k under the 256B cap, s20_decode.sh). Prediction: new / base256 1.08-1.10 as in
# s20_promo.sh; c2 / new 1.00-1.03 (the cap gone, cuDNN at 1.01-1.02 of new is the most left). Ask for an H200.
#   bash bench/integration/s20_decode2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s20d2
out=${OUT:-$out} # results straight to $OUT: a call cut off at its limit still brings back what it measured
sm90_build_py base256 "-DFLASHATTN_SM90_L2_PROMOTION=256" 5 300 &
sm90_build_py new "" 5 300 &
sm90_build_py c2 "-DFLASHATTN_SM90_SINGLE_CONSUMER_CTAS=2" 5 300 &
wait
rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn" "$bld/pyroot/flashattn_ctrl" &&
  sed -i 's/"flashattn::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py"
for pass in "p1 base256,new,c2,ctrl" "p2 ctrl,c2,new,base256" "p3 c2,ctrl,base256,new"; do
  set -- $pass
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 100 python3 bench/decode_ab.py --builds "$2" --rep 60 2>&1 |
    grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" | tee -a "$out/decode.jsonl"
  log "decode $1"
done
log total
