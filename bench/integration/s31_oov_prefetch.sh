#!/usr/bin/env bash
# Run in session 31 on c2db9e6, where PREFETCH_O_OVER_V=1 meant every O-over-V kernel and PREFETCH_AFTER_BLOCKS
# set its block; on later trees oov1 / oov2 read as PREFETCH_O_OVER_V=2 with PREFETCH_AFTER_BLOCKS_O_OVER_V=1 / 2.
# Result (s31_oov_prefetch_summary.txt): oov2 against base non-causal 512 / 1k / 2k / 4k / 16k 0.978 / 1.0070 /
# 1.0046 / 1.0001 / 0.9997, oov1 0.976 / 0.994 / 0.998 / 0.999 / 0.999 (control 0.998-1.003). Kept: oov2 in the
# kernels of more than 64 keys per block (from 513 keys); 512's 64-key kernel keeps no prefetch.
# Prepared in session 30: the next tile's Q prefetch in the O-over-V kernels (unmasked d256, 128- and
# 64-key blocks) in session 30's d128 form: early, the K-lookahead loop split at the prefetch
# (FLASHATTN_SM90_PREFETCH_O_OVER_V=1; default 0, default SASS identical). s30_pf_early.sh read the in-loop form
# after the second block there at non-causal 512 / 1k -2.0 / +0.4% against none; at d128 the first block and the
# split loop added +0.4..+0.6% over that form. Builds base, oov1 (after the first block), oov2 (after the
# second), a control copy of base; the d256 suites (fp16 + bf16) with oov1, racecheck / synccheck on d256 shapes,
# float64-checked CLI runs; paired, three passes, d256 non-causal 512..16k (and causal 1k, unchanged kernels, as
# a check of the method).
# Local SASS (bf16): the two O-over-V kernels change, their producers spill 2 / 7 more LDL/STL (16-56 bytes),
# none before the last HGMMA; every other kernel identical.
# Prediction: oov1 against base +0.5..+1.5% at 512 / 1k, ±0.3% from 2k; oov2 lower at 512.
# One H200 call (~4.5 minutes).
#   bash bench/integration/s31_oov_prefetch.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s31o
oov1="-DFLASHATTN_SM90_PREFETCH_O_OVER_V=1"
test_cli_build "256" "fp16;bf16" 6 "$oov1" &
PY_DIMS=256 sm90_build_py base "" 3 300 &
PY_DIMS=256 sm90_build_py oov1 "$oov1" 3 300 &
PY_DIMS=256 sm90_build_py oov2 "$oov1 -DFLASHATTN_SM90_PREFETCH_AFTER_BLOCKS=2" 3 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
cli_or_stop "--head-dim 256 --seqlen-q 1024 -b 4 --heads 8 --heads-kv 8" || exit 1
cli_runs "--head-dim 256 --seqlen-q 1000 -b 2 --heads 8 --heads-kv 2" \
  "--head-dim 256 --seqlen-q 512 -b 8 --heads 8 --heads-kv 8"
cli_summary
race='*Spread*cuda_sm90*300x1000*:*Spread*cuda_sm90*512x2304_b1_h2_d256*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 150
suites_summary
synccheck_on "$race" 60
rm -f "$out/racecheck.txt"
sm90_ctrl_copy
paired_passes base,ctrl,oov1,oov2 256 0 512,1024,2048,4096,16384 3 120
paired_passes base,ctrl,oov1,oov2 256 1 1024 2 60
paired_summary base ctrl oov1 oov2
log total
