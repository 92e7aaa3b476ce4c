#!/usr/bin/env bash
# Session 26, call 4: d128 / d256 switches that no session has read with paired timing (each was set by do_bench
# A/Bs of ~4% resolution in sessions 4-16), on the new defaults, three passes:
#   ebf0  EARLY_BLOCK_FLAGS=0 (sm90L: d128 +1.3%, d256 -2.5% for the flags, i.e. d256 may gain without them)
#   fkq0  FIRST_K_BEFORE_Q=0, ed0 EARLY_DECODE=0, stm0 STMATRIX_O=0, ff0 FAST_FINALIZE=0 (session 6: together
#         +2..+12% at <= 1k keys, one at a time never read)
#   tr256 TREE_REDUCTIONS_MAX_D=256 (the d256 row reductions as trees; never measured there)
#   sc1   STATIC_COUPLES=1 (causal problems on static couples on every kernel: session 16 read it with the multicast
#         kernel; d128 causal 8k / 16k now run the single-CTA kernel's dynamic claims)
#   tsf0  TAIL_SECTION_FACTOR=0, sec4 SECTION_L2_DIVISOR=4 (d128 causal 4k +1.6% / 512-2k -1% in session 25; 8k /
#         16k now single-CTA)
# Prediction: each within +-1% except ebf0 at d256 (0..+2%) and sc1 on d128 causal 8k / 16k (-1..+2%).
# One H200 call (~5 minutes).
#   bash bench/integration/s26_knobs.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s26k
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
p=-DFLASHATTN_SM90_
sweep_builds "128;256" 2 "ebf0=${p}EARLY_BLOCK_FLAGS=0" "fkq0=${p}FIRST_K_BEFORE_Q=0" "ed0=${p}EARLY_DECODE=0" \
  "stm0=${p}STMATRIX_O=0" "ff0=${p}FAST_FINALIZE=0" "tr256=${p}TREE_REDUCTIONS_MAX_D=256" \
  "sc1=${p}STATIC_COUPLES=1" "tsf0=${p}TAIL_SECTION_FACTOR=0" "sec4=${p}SECTION_L2_DIVISOR=4"
paired_passes "$sweep_names" 128,256 1,0 512,1024,2048,4096,8192,16384 3 150
# shellcheck disable=SC2086  # one build name per word
paired_summary ${sweep_names//,/ }
log total
