#!/usr/bin/env bash
# Session 19, last call: bench/decode_ab.py and bench/sm90r_ab.py after their shared timing moved into
# sm90r_ab.py (import_builds, time_rotated). On an H200 (asked for; four calls got an H100): the decode A/B of
# s19_decode2.sh (prediction: new / base 1.06-1.10 on the b64 8k row). On an H100: one pass of each script as a
# smoke test (decode b64 8k; d128 causal 512).
#   bash bench/integration/s19_last.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s19l
sm90_build_py base "-DFLASHATTN_SM90_SINGLE_CONSUMER=0" 8 300 &
sm90_build_py new "" 8 300 &
wait
sm90_ctrl_copy
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  passes=("p1 base,new,ctrl" "p2 ctrl,new,base")
  shapes=gqa_b64_8k,gqa_b64_8k_page256,gqa_b16_32k,mha_b16_4k
else
  passes=("p1 base,new,ctrl")
  shapes=gqa_b64_8k
fi
for pass in "${passes[@]}"; do
  set -- $pass
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 120 python3 bench/decode_ab.py --builds "$2" --rep 60 \
    --shapes "$shapes" 2>&1 | grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" | tee -a "$out/decode.jsonl"
  log "decode $1"
done
sm90_ab p1 base,new,ctrl 128 1 512 40 60
log total
