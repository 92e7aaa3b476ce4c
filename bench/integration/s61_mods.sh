#!/usr/bin/env bash
# Session 61: the Hopper backward's softcap / ALiBi kernels (BackwardConfig::kScoreMods, units
# backward_hdim{64,128}_{dtype}_softcap_alibi[_deterministic].cu; the plain kernels' SASS is unchanged, compared
# locally). The new grid cases alone first (a hang stops the call), the backward suites on cuda_sm90 (drawn cases
# now with softcap 1.5 / 30 and ALiBi), the determinism and Api suites, racecheck over the new cases, pytest's
# interface tests (their ALiBi cases' backward now runs on cuda_sm90), then the backward against cuda_sm80's
# general kernel with softcap 30, and with ALiBi (SDPA's rows are plain attention's, a yardstick). Predicted:
# 1.5-2.5x cuda_sm80's speed at d128, 1.2-1.8x at d64; within 0.80-0.95x of our plain kernels' speed.
#   bash bench/integration/s61_mods.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s61m
tests_and_py_build "64;128" || exit 1
first_cases 'Grid/BackwardTest.*cuda_sm90_*_softcap_*:Grid/BackwardTest.*cuda_sm90_*_alibi*' 60 || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*:Api.*' 150
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_softcap_*:Grid/BackwardTest.*cuda_sm90_*_alibi*:-*_det*:*1023x1024*' 80 racecheck
py_tests_on_gpu test_interface.py
for mods in "--softcap 30" "--alibi"; do
  # shellcheck disable=SC2086  # the options' two words
  (PYTHONPATH=$bld/pyroot timeout 100 python3 bench/backward_compare.py --hdims 128,64 --seqlens 1024,8192 \
    --rounds 2 --settle-ms 100 --check-max-seqlen 2048 --backends cuda_sm90,cuda_sm80,cuda_sm90:det $mods \
    >>"$out/mods.jsonl" 2>>"$out/mods.err")
  log "compare $mods rc=$? $(tail -2 "$out/mods.err" | cut -c1-300)"
done
log total
