#!/usr/bin/env bash
# Session 28, third O_OVER_V call. s28_oov2.sh (consumer 1 taking the first O slot under a right window bound)
# was correct (suites, sanitizers, CLI) but causal lost 2.7-6% paired: consumer 0's first S of the next tile then
# waited for consumer 1's epilogue. Now consumer 0 always takes the first slot, and the dense producer issues each
# K one block ahead of its V (the last tile's O slots between the second K and the first V), so the second K that
# a skipping consumer 0 waits for never waits for an O store; the paged kernels keep the K-then-V order and store
# O before the next tile's first S (consumer.h kEarlyNextS). Local SASS (d256 bf16): the consumers without spills,
# the producer's spills per tile only (64-key dense: 32 / 40 B); the default kernels' SASS is the same up to
# register names (and one swapped pair of moves in the d128 producer).
# Steps as s28_oov2.sh: tests / CLI / "new" Python extension (d64 / d128 / d256) with the switch, "base" (d256)
# without; a causal CLI run first with a short limit (the call stops if it hangs); suites, racecheck, synccheck;
# paired base / ctrl / new, three passes, d256 non-causal and causal 512..4k; the grid (two rounds).
# Prediction: non-causal as in s28_oov2 (+1.4 / +1.4 / +0.8 / +0.3%); causal 1k-4k +0.5..+2% (was -2.7..-6%).
# One H200 call (~5 minutes).
#   bash bench/integration/s28_oov3.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s28x
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
