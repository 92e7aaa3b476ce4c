#!/usr/bin/env bash
# Session 61: the Hopper backward at d = 256 (BackwardConfig::kSplitHeadDim: 64-key blocks, dK / dV split by
# columns between the two consumers, S^T / dP^T over 32 query rows each, P^T and dS^T staged in shared memory,
# dQ added from registers by red.global.add.v4.f32; default mode, with and without softcap / ALiBi), and d64's
# softcap / ALiBi calls on two consumers from 2048 keys (ptxas serialized the three-consumer kernel's wgmmas:
# C7512). Local ptxas: no spills at d256. The d256 grid cases alone first, then the backward suites, Api and
# racecheck over the d256 cases; then d256's backward against cuda_sm80's and cuDNN's (plain, and softcap 30
# with SDPA's plain rows as yardstick), and d64 softcap against the tree before (flashattn_base: three consumers
# at 8k). Predicted: d256 1.3-1.6x cuda_sm80, 0.80-0.95x cuDNN; d64 softcap at 8k 1.1-1.3x faster.
#   bash bench/integration/s61_d256.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s61d
# (The tree before, for the d64 A/B only: head dim 64 alone, beside this tree's full build.)
tree_copy "$bld/base-tree" bench/integration/s61_d256.patch -R || exit 1
(cd "$bld/base-tree" && PY_DIMS=64 sm90_build_py base "" 4 400 -DFLASHATTN_BACKWARD=ON) &
tests_and_py_build "64;128;256"
wait
first_cases 'Grid/BackwardTest.*cuda_sm90_*_d256_*' 90
[[ $? == 124 ]] && exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*:Api.*' 150
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_20[4-8]_*' 80 racecheck
(PYTHONPATH=$bld/pyroot timeout 120 python3 bench/backward_compare.py --hdims 256 --seqlens 1024,4096,16384 \
  --rounds 2 --settle-ms 100 --check-max-seqlen 4096 --backends cuda_sm90,cuda_sm80 >"$out/d256.jsonl" \
  2>"$out/d256.err")
log "compare d256 rc=$? $(tail -2 "$out/d256.err" | cut -c1-300)"
(PYTHONPATH=$bld/pyroot timeout 60 python3 bench/backward_compare.py --hdims 256 --seqlens 4096 --rounds 2 \
  --settle-ms 100 --check-max-seqlen 4096 --backends cuda_sm90,cuda_sm80 --softcap 30 >"$out/d256softcap.jsonl" \
  2>"$out/d256softcap.err")
log "compare d256 softcap rc=$? $(tail -2 "$out/d256softcap.err" | cut -c1-300)"
backward_compare_vs_base d64softcap 60 --hdims 64 --seqlens 2048,8192 --rounds 2 --settle-ms 100 \
  --check-max-seqlen 2048 --backends cuda_sm90 --base-backends cuda_sm90 --softcap 30
log total
