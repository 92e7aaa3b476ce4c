#!/usr/bin/env bash
# RAN in session 29 on 0415c38, where PREFETCH_NEXT_TILE=1 meant Q in every dense kernel and =2 Q with the first K / V
# block; the K / V form was removed afterwards, and =2 now means Q in every dense kernel (forward_config.h).
# Session 29, third experiment: PREFETCH_NEXT_TILE (forward_config.h; default 0, default SASS identical). The
# dense producer, after issuing a tile's K/V loads (about kStages key blocks before the tile's end), has L2 fetch
# the next tile's Q (1) and also its first K and V block (2, single-CTA kernels), so that the loads at the tile
# boundary hit L2. Why: at d128 non-causal 512 a tile is four key blocks, the tile boundary is about a third of
# the time (docs/kernel-notes-sm90.md, session 28 Next), and every tile's Q comes from DRAM. Steps: tests / CLI
# with =2 (d64 / d128 / d256, fp16 + bf16), a CLI run with a short limit, float64-checked runs, the sm90 suites,
# racecheck / synccheck on the Spread cases; the Python extensions base / pf1 / pf2 and a control copy; paired
# timing, three passes on d128 non-causal 512..4k and 16k, two on d128 causal 512 / 1k / 4k, d256 non-causal
# 512 / 1k, d256 causal 1k / 4k and d64 non-causal 512.
# Prediction: d128 non-causal 512 / 1k +0.5..+2% (if the boundary waits for Q or the first K from DRAM), the long
# rows +-0.3%; pf2 above pf1 only at 512 / 1k.
# One H200 call (~5 minutes).
#   bash bench/integration/s29_pf.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s29p
out=${OUT:-$out}
test_cli_build "64;128;256" "fp16;bf16" 6 "-DFLASHATTN_SM90_PREFETCH_NEXT_TILE=2" &
PY_DIMS="64;128;256" sm90_build_py base "" 4 300 &
PY_DIMS="64;128;256" sm90_build_py pf1 "-DFLASHATTN_SM90_PREFETCH_NEXT_TILE=1" 3 300 &
PY_DIMS="64;128;256" sm90_build_py pf2 "-DFLASHATTN_SM90_PREFETCH_NEXT_TILE=2" 3 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
cli_or_stop "--head-dim 128 --seqlen-q 512 -b 8 --heads 16 --heads-kv 16" || exit 1
cli_runs "--head-dim 128 --causal --seqlen-q 4096 -b 2 --heads 16 --heads-kv 4" \
  "--head-dim 256 --seqlen-q 1000 -b 2 --heads 8 --heads-kv 2" \
  "--head-dim 64 --causal --seqlen-q 2048 -b 2 --heads 8"
cli_summary
sm90_ctrl_copy
multicast_checks 150
paired_passes base,ctrl,pf1,pf2 128 0 512,1024,2048,4096,16384 3 150
paired_passes base,ctrl,pf1,pf2 128 1 512,1024,4096 2 100
paired_passes base,ctrl,pf1,pf2 256 0 512,1024 2 80
paired_passes base,ctrl,pf1,pf2 256 1 1024,4096 2 80
paired_passes base,ctrl,pf1,pf2 64 0 512 2 60
paired_summary base ctrl pf1 pf2
log total
