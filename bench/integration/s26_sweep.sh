#!/usr/bin/env bash
# Session 26, call 2: candidate defaults from s25_sweep256.sh (run first this session) and the questions session 25
# left open, with paired timing (three passes).
#  - nd: the K/V multicast of causal problems off at d128 (mcc0: causal 8k / 16k +4.4 / +4.0%) and d256 (mcd0:
#    causal 4k / 8k / 16k +1.8 / +2.3 / +0.5%), with the d256 64-key blocks and placement clusters on causal rows
#    to 4k (b64m: causal 4k +3.2%). Prediction: d128 causal 8k/16k +4%, d256 causal 4k +3%, 8k +2%, the rest 0.
#  - on top of nd: the 64-key blocks + placement to 8k at d256 causal (b64m8k; prediction 8k -1..+1% against nd);
#    the d128 single-CTA tile order on the non-causal rows from 2k (hm2k / hm4k: one-head L2 sections end after
#    2048 / 4096 keys; prediction +-0.5%); the decoded handoff at d192 (dh2; prediction -1..+1%); wider d128 key
#    blocks from 2k keys causal or not (lk144 / lk160 / lk176: the long-key kernel, which has no fused row sums
#    (-1.2% by session 22) and at 176 stores O through Q's buffer; prediction: 144 / 160 -1..+1%, 176 -2..0%; a
#    gain would justify fitting the fused row sums into the wider block).
# One H200 call (~7 minutes).
#   bash bench/integration/s26_sweep.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s26w
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
nd="-DFLASHATTN_SM90_KV_MULTICAST_CAUSAL=0 -DFLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=0"
nd+=" -DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=4096 -DFLASHATTN_SM90_PLACEMENT_MAX_SEQLEN=4096"
lk="-DFLASHATTN_SM90_LONG_KEY_MIN_SEQLEN_MASKED=2048 -DFLASHATTN_SM90_LONG_KEY_BLOCK_N"
sweep_builds "128;192;256" 2 "nd=$nd" \
  "b64m8k=$nd -DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=8192 -DFLASHATTN_SM90_PLACEMENT_MAX_SEQLEN=8192" \
  "hm2k=$nd -DFLASHATTN_SM90_HEAD_MAJOR_MAX_SEQLEN=2048" "hm4k=$nd -DFLASHATTN_SM90_HEAD_MAJOR_MAX_SEQLEN=4096" \
  "dh2=$nd -DFLASHATTN_SM90_DECODED_HANDOFF=2" "lk144=$nd $lk=144" "lk160=$nd $lk=160" "lk176=$nd $lk=176"
paired_passes base,ctrl,nd,hm2k,hm4k,lk144,lk160,lk176 128 1,0 1024,2048,4096,8192,16384 3 120
paired_passes base,ctrl,nd,b64m8k 256 1 512,1024,2048,4096,8192,16384 3 90
paired_passes base,ctrl,nd,dh2 192 1,0 512,1024,2048,4096,8192,16384 3 100
# shellcheck disable=SC2086  # one build name per word
paired_summary ${sweep_names//,/ }
log total
