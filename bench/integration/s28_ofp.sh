#!/usr/bin/env bash
# Prepared in session 27, not run: OVERWRITE_FIRST_PV=1 (forward_config.h; the d128 single-CTA two-consumer
# kernel's first P V of a tile overwrites O instead of accumulating into an O zeroed at the tile's start). Local
# SASS (d128 bf16): 3840 -> 3800 static instructions in the unmasked single-CTA kernel, the loop's issue stretch 61
# -> 63 instructions (225 static stall cycles both), the tile boundary's next-S stretch 166 -> 125, spills as the
# default's; per tile and consumer thread ~36 CS2R fewer against 2 instructions per key block. It cuts
# instructions, not traffic, so paired timing reads it (session 26's rule). Steps: d128 suites (fp16 + bf16) with
# the switch, racecheck and synccheck on short and causal cases, then paired timing of base / ctrl / ofp, three
# passes, d128 non-causal 512 / 1k and causal 512 / 1k / 2k / 4k (the rows the kernel serves).
# Prediction: +0.5..+1.5% at non-causal 512 and causal 512 / 1k, +-0.3% at causal 4k.
# One H200 call (~5 minutes).
#   bash bench/integration/s28_ofp.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s28o
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
flags="-DFLASHATTN_SM90_OVERWRITE_FIRST_PV=1"
switch_builds ofp "$flags" "128" "128" 300
rm -f "$out"/py_*_build.log "$out"/tests_build.log
sm90_ctrl_copy
race='*cuda_sm90_*512x512*:*Spread*cuda_sm90*700x700*:*cuda_sm90_*512x6000*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 100
suites_summary
synccheck_on "$race" 40
rm -f "$out/racecheck.txt"
paired_passes base,ctrl,ofp 128 0 512,1024 3 100
paired_passes base,ctrl,ofp 128 1 512,1024,2048,4096 3 120
paired_summary base ctrl ofp
log total
