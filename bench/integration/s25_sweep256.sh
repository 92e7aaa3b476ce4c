#!/usr/bin/env bash
# Prepared in session 24 (extended in session 25), not run: existing d256 switches re-read with interleaved timing (sm90r_ab.py --paired; see
# s25_sweep128.sh). Earlier readings (do_bench, ~4% resolution): CONSUMER_KEY_RANGE=0 at causal within noise (15),
# KV_MULTICAST_D256_CAUSAL=8192 (17 chose 2k), KV_MULTICAST_D256=4096 ("slower", 17), 64-key blocks with placement to
# causal 4k 1.006 (23), 64-key unmasked blocks to 1k 0.997 (23), SECTION_L2_DIVISOR_OTHER=4 (16: DRAM halved, time
# even), TILE_MASK_RANGE=2 / MASK_FORM_OTHER=2 (24, one paired pass: -0.5..0% / +0.4..+0.5% causal 1k-4k; the mask
# form became the default in session 25 and left this sweep). Session 25 turned the d128 unmasked K/V multicast off
# (+1.6..+3.2% at 2k-16k on the H200 and the H100), so the causal multicast of both kernels is read off too (mcd0:
# d256, mcc0: d128; the extensions carry d128 as well for it). Prediction: each within +-1%, the causal multicast
# off -1..+2%. Three passes, d256 causal and not, 512-16k, and d128 causal. Ask for an H200.
#   bash bench/integration/s25_sweep256.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s25x
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
b64m="-DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=4096 -DFLASHATTN_SM90_PLACEMENT_MAX_SEQLEN=4096"
b64m+=" -DFLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=4097"
sweep_builds "128;256" 2 ckr0=-DFLASHATTN_SM90_CONSUMER_KEY_RANGE=0 mcc8k=-DFLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=8192 \
  mcu4k=-DFLASHATTN_SM90_KV_MULTICAST_D256=4096 "b64m=$b64m" b64u=-DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN=1024 \
  seco4=-DFLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER=4 mcd0=-DFLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=0 \
  mcc0=-DFLASHATTN_SM90_KV_MULTICAST_CAUSAL=0
paired_passes "$sweep_names" 256 1,0 512,1024,2048,4096,8192,16384 3 150
paired_passes base,ctrl,mcc0 128 1 2048,4096,8192,16384 3 60
# shellcheck disable=SC2086  # one build name per word
paired_summary ${sweep_names//,/ }
log total
