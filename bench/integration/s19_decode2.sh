#!/usr/bin/env bash
# Session 19, third call: s19_decode.sh trimmed (no s3: 3 stages read 0.996-1.003 of base on an H100), asked of an
# H200 again (s19_first.sh and s19_decode.sh both got an H100, where decoding is memory-bound and the one-consumer
# kernel reads 1.000-1.003 of base). Prediction on an H200: new / base 1.06-1.10 on the b64 8k row.
#   bash bench/integration/s19_decode2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s19e
sm90_build_py base "-DFLASHATTN_SM90_SINGLE_CONSUMER=0" 8 400 &
sm90_build_py new "" 8 400 &
wait
sm90_ctrl_copy
for pass in "p1 base,new,ctrl" "p2 ctrl,new,base"; do
  set -- $pass
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 120 python3 bench/decode_ab.py --builds "$2" --rep 60 \
    --shapes gqa_b64_8k,gqa_b64_8k_page256,gqa_b16_32k,mha_b16_4k 2>&1 |
    grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" | tee -a "$out/decode.jsonl"
  log "decode $1"
done
log total
