#!/usr/bin/env bash
# Session 28: O_OVER_V=1 (forward_config.h; the d256 single-CTA kernels put each consumer's O over a V stage, as
# two uses of the V ring at every tile boundary, instead of over Q's rows: Q is free after the tile's last S, the
# next tile's first S is issued before the epilogue, and the next tile's first two V loads wait for the two O
# stores). Local SASS (d256 bf16): consumers without spills; the producer's per-tile spills 8 -> 12 B (80 keys)
# and 8 -> 20 B (64 keys), none in its per-block loop; the default cubins byte-identical. Steps: d256 suites
# (fp16 + bf16, dense, varlen, paged KV cache, the consumer key ranges) with the switch, racecheck and synccheck
# on causal / windowed / sq > sk cases of both block widths, float64-checked CLI runs, then paired timing of
# base / ctrl / oov, three passes, d256 non-causal 512..16k and causal 512..4k (causal 8k / 16k run the cluster
# kernel, which the switch leaves alone).
# Prediction: +2..+4% at non-causal 1k and causal 2k / 4k (the tile boundary: ~2 us of Q reload per tile of 13-33
# key blocks), +0.5..+2% at non-causal 4k-16k (longer tiles), +-1% at 512 (a tile or two per CTA).
# One H200 call (~6 minutes).
#   bash bench/integration/s28_oov.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s28v
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
flags="-DFLASHATTN_SM90_O_OVER_V=1"
switch_builds oov "$flags" "256" "256" 300
rm -f "$out"/py_*_build.log "$out"/tests_build.log
sm90_ctrl_copy
race='*Spread*cuda_sm90*512x4096*:*Spread*cuda_sm90*300x1000*:*ConsumerKeyRange*500x400*:*ConsumerKeyRange*480x510*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 150
suites_summary
synccheck_on "$race" 60
rm -f "$out/racecheck.txt"
cli_runs "--head-dim 256 --causal --seqlen-q 4096 -b 1 --heads 8 --heads-kv 8" \
  "--head-dim 256 --seqlen-q 1000 -b 2 --heads 8 --heads-kv 2"
cli_summary
paired_passes base,ctrl,oov 256 0 512,1024,2048,4096,8192,16384 3 150
paired_passes base,ctrl,oov 256 1 512,1024,2048,4096 3 120
paired_summary base ctrl oov
log total
