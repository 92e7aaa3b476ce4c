#!/usr/bin/env bash
# Prepared in session 24, not run: existing d128 switches re-read with interleaved timing (sm90r_ab.py --paired,
# which resolves ~0.2% where the do_bench A/Bs that judged them resolved ~4%). Each variant changes one default;
# three passes over the d128 rows (causal and not, 512-16k), beside base and a control. What earlier sessions read:
# EARLY_NEXT_S=2 1.00 at d128 (session 21), KV_MULTICAST_MIN_SEQLEN=8192 2k / 4k within noise (23),
# KV_MULTICAST_CAUSAL=4096 (the causal multicast from 4k; 16 chose 8k), TILE_MASK_RANGE=0 non-causal even (23),
# SECTION_L2_DIVISOR=4 / 16 (8: session 8, at 512 keys), MASK_FORM_D128=1 (8). Prediction: each within +-1%; a
# variant that reads above +0.3% on a row group in every pass is worth a default change (then suites). Ask for an
# H200.
#   bash bench/integration/s25_sweep128.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s25w
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
sweep_builds 128 2 ens2=-DFLASHATTN_SM90_EARLY_NEXT_S=2 mc8k=-DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=8192 \
  mcc4k=-DFLASHATTN_SM90_KV_MULTICAST_CAUSAL=4096 tmr0=-DFLASHATTN_SM90_TILE_MASK_RANGE=0 \
  sec4=-DFLASHATTN_SM90_SECTION_L2_DIVISOR=4 sec16=-DFLASHATTN_SM90_SECTION_L2_DIVISOR=16 \
  mfd1=-DFLASHATTN_SM90_MASK_FORM_D128=1
paired_passes "$sweep_names" 128 1,0 512,1024,2048,4096,8192,16384 3 150
# shellcheck disable=SC2086  # one build name per word
paired_summary ${sweep_names//,/ }
log total
