#!/usr/bin/env bash
# Session 28, second O_OVER_V call. s28_oov.sh hung on every causal d256 problem: under kEarlyNextS consumer 0
# issues the next tile's first S before its epilogue, and where its rows skip that tile's top block
# (kConsumerKeyRange) it waits for the tile's second K first; the producer issues that K after the tile's first
# V, which waited for consumer 0's O store: a cycle. Fixed in consumer.h: where a right window bound may make
# consumer 0 skip (p.window_right >= 0), consumer 1 takes the first O slot (whose stage gets that V). Its
# non-causal rows (no skip) read +1.4 / +1.3 / +0.9 / +0.4 / +0.2 / +0.1% paired at 512 / 1k / 2k / 4k / 8k / 16k.
# Steps: the tests and CLI with the switch (d256, fp16 + bf16), the Python extension "new" with the switch (d64 /
# d128 / d256: the grid) and "base" (d256); a causal float64-checked CLI run first, with a short limit: if it does
# not finish, the call stops there. Then the suites, racecheck and synccheck (causal, windowed, sq > sk), paired
# timing base / ctrl / new (three passes, d256 non-causal 512..4k, causal 512..4k), and bench/compare.py's grid
# (two rounds) on the switch's tree.
# Prediction: causal 2k / 4k +1..+3% paired; the grid's d256 non-causal 1k and causal 4k rows 1-2% closer to the
# normalised FA3 anchor (0.976 / 0.965 on session 27's two-grid mean).
# One H200 call (~6 minutes).
#   bash bench/integration/s28_oov2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s28w
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
flags="-DFLASHATTN_SM90_O_OVER_V=1"
test_cli_build "256" "fp16;bf16" 6 "$flags" &
PY_DIMS="64;128;256" sm90_build_py new "$flags" 6 300 &
PY_DIMS="256" sm90_build_py base "" 4 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
cli=$bld/tests/tools/cli/flashattn
timeout 40 "$cli" run --backend cuda_sm90 --repeat 2 --verify sample --head-dim 256 --causal --seqlen-q 4096 -b 1 \
  --heads 8 --heads-kv 8 >>"$out/cli.txt" 2>&1
rc=$?
log "cli causal 4096 rc=$rc"
if [[ $rc -ne 0 ]]; then
  tail -5 "$out/cli.txt" >>"$out/summary.txt"
  exit 1
fi
cli_runs "--head-dim 256 --causal --seqlen-q 1500 -b 2 --heads 8 --heads-kv 2" \
  "--head-dim 256 --seqlen-q 1000 -b 2 --heads 8 --heads-kv 2"
cli_summary
sm90_ctrl_copy
race='*Spread*cuda_sm90*512x4096*:*Spread*cuda_sm90*300x1000*:*ConsumerKeyRange*500x400*:*ConsumerKeyRange*480x510*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 120
suites_summary
synccheck_on "$race" 60
rm -f "$out/racecheck.txt"
paired_passes base,ctrl,new 256 0 512,1024,2048,4096 3 100
paired_passes base,ctrl,new 256 1 512,1024,2048,4096 3 100
paired_summary base ctrl new
compare_grid 2 240
log total
