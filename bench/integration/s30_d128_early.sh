#!/usr/bin/env bash
# Ran in session 30 on f25aada (the default then: after the tile's second key block, windowed or not; records
# s30_d128_early_summary.txt, s30_d128_early_ab.jsonl; its patch applies to that tree only).
# Session 30: the next tile's Q prefetch in the two-consumer d = dv = 128 kernels, early (after the tile's second
# key block's loads), made the default after s30_pf_early.sh read it at +2.28 / +1.28 / +0.34% on d128 non-causal
# 512 / 1k / 4k and +1.20 / -0.13% causal 512 / 1k (paired, in a build with it in every dense kernel). This
# confirms it against the tree without it in those kernels (s30_d128_no_prefetch.patch: the d128 clause of
# kPrefetchNextTile off; every other kernel the same) on d128 rows 512..16k both masks, and reads where in the
# tile it should go (FLASHATTN_SM90_PREFETCH_AFTER_BLOCKS 1 and 3 against the default 2); then one grid of the
# tree (compare_grid, two rounds), the first of the final tree.
# The default's two-consumer d128 kernels are SASS-identical to s30_pf_early.sh's early2 build (suites, racecheck,
# synccheck and CLI runs passed there, fp16 + bf16); the decode and paged d128 kernels are unchanged.
# Prediction: new against old +2% at non-causal 512, +1% at 1k and causal 512, ±0.3% from 4k; after-1 within
# ±0.5% of after-2 (at 512 the tile has four key blocks: after the second is its middle), after-3 lower at 512.
# One H200 call (~7 minutes).
#   bash bench/integration/s30_d128_early.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s30d
tree_copy /tmp/s30d-old bench/integration/s30_d128_no_prefetch.patch
(cd /tmp/s30d-old && PY_DIMS=128 sm90_build_py old "" 4 300) &
PY_DIMS="64;128;256" sm90_build_py new "" 6 300 &
PY_DIMS=128 sm90_build_py after1 "-DFLASHATTN_SM90_PREFETCH_AFTER_BLOCKS=1" 3 300 &
PY_DIMS=128 sm90_build_py after3 "-DFLASHATTN_SM90_PREFETCH_AFTER_BLOCKS=3" 3 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy old
paired_passes old,ctrl,new,after1,after3 128 0 512,1024,2048,4096,16384 3 120
paired_passes old,ctrl,new,after1,after3 128 1 512,1024,2048,4096,16384 3 120
paired_summary old ctrl new after1 after3
compare_grid 2 200
(cd "$out" && tar -czf "${OUT:-/tmp}/grid.tgz" compare-*)
log total
