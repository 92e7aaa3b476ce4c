#!/usr/bin/env bash
# Session 19, first call (issue 6): two new kernels, correctness and a same-process A/B each.
#  (a) decoding on one consumer warpgroup with 64-row tiles (forward_config.h use_single_consumer, default on:
#      FLASHATTN_SM90_SINGLE_CONSUMER): H200 decode 3.97 TB/s against cuDNN 4.37 (compare-20261127-224832).
#      The 128-row kernel computes both GEMMs for 128 rows where decoding has 4 (q length 1 x a GQA group of
#      4): 128 FLOP per byte of K/V, ~510 TFLOP/s at 4 TB/s, near the card's power-capped tensor rate.
#      Prediction: the decode row (b64, 32 / 8 heads, 8k keys) 3.97 -> 4.2-4.4 TB/s on an H200 (+6-10%), less on
#      an H100 (3.35 TB/s DRAM: already 0.99 of cuDNN); the other shapes alike; errors equal to base's.
#  (b) d = 128 with 64-key blocks for short causal rows (forward_config.h use_d128_block64, default off;
#      helper branch s19-d128b64): consumer 0 skips the diagonal block's upper 64 keys, -10% tensor work at
#      causal 512, -5% at 1k, four stages instead of two. Prediction: causal 512 +3-6%, 1k +0-3%; non-causal 512
#      (no skip, twice the per-block costs) -2..+2%.
# Builds (d128, bf16): base (SINGLE_CONSUMER=0), new (the tree), b64 (SINGLE_CONSUMER=0 + the 64-key kernel),
# ctrl (base again). The test binary (d128 bf16 + fp16) has both kernels on.
#   bash bench/integration/s19_first.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s19a
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/tests.txt "$out"/cli.txt "$out"/racecheck.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
b64="-DFLASHATTN_SM90_D128_BLOCK64_MAX_SEQLEN_MASKED=1024 -DFLASHATTN_SM90_D128_BLOCK64_MAX_SEQLEN=512"
test_cli_build "128" "bf16;fp16" 5 "$b64" &
sm90_build_py base "-DFLASHATTN_SM90_SINGLE_CONSUMER=0" 4 400 &
sm90_build_py new "" 4 400 &
sm90_build_py b64 "-DFLASHATTN_SM90_SINGLE_CONSUMER=0 $b64" 4 400 &
wait
suites_and_racecheck '*cuda_sm90*:*ConsumerKeyRange*' \
  '*KVCache*cuda_sm90*1x1500*:*KVCache*cuda_sm90*4x700*:*ForwardTest*cuda_sm90*16x239*d128*:*ForwardTest*cuda_sm90*512x512*d128*' 200
cli_runs "--head-dim 128 --seqlen-q 1 --seqlen-k 8192 -b 8 --heads 32 --heads-kv 8" \
  "--head-dim 128 --causal --seqlen-q 4 --seqlen-k 3000 -b 4 --heads 32 --heads-kv 8 --paged 64" \
  "--head-dim 128 --seqlen-q 1 --seqlen-k 5000 -b 6 --heads 16 --heads-kv 2 --paged 256 --dtype fp16" \
  "--head-dim 128 --causal --seqlen-q 64 --seqlen-k 2000 -b 4 --heads 8 --softcap 30" \
  "--head-dim 128 --causal --seqlen-q 512 -b 32 --heads 16" \
  "--head-dim 128 --causal --seqlen-q 1000 -b 8 --heads 16 --heads-kv 4 --dtype fp16" \
  "--head-dim 128 --causal --seqlen-q 700 --seqlen-k 1024 -b 4 --heads 8 --alibi" \
  "--head-dim 128 --seqlen-q 512 -b 16 --heads 16"
sm90_ctrl_copy
for pass in "p1 base,new,ctrl" "p2 ctrl,new,base"; do
  set -- $pass
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 150 python3 bench/decode_ab.py --builds "$2" 2>&1 |
    grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" | tee -a "$out/decode.jsonl"
  log "decode $1"
done
for pass in "p1 base,b64,ctrl" "p2 ctrl,b64,base" "p3 b64,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 128 "1,0" 512,1024 60 90
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base b64 ctrl | tee -a "$out/summary.txt"
log total
