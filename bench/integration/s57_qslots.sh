#!/usr/bin/env bash
# Session 57: the narrow decode tile's Q in two slots of its 8 rows (NARROW_Q_SLOTS 2, the tree) against one
# slot of 64 rows (-DFLASHATTN_SM90_NARROW_Q_SLOTS=1: today's kernels, their SASS identical to the session's
# start). First two KV-cache cases alone (30 s), then s57_qslots.py's rows in two passes, order swapped, then the
# narrow kernels' GPU cases (the two of session 56 not yet run on the kept kernel among them) under memcheck /
# racecheck.
# Prediction: decodes whose CTAs run several tiles 0.85-0.97 of the time (the most at 1024 keys and d64, whose
# tiles are shortest), 16384 keys 0.98-1.00; one tile a CTA (17-33 sequences over 1024 keys on the kernel of two
# CTAs a SM, one wave) 0.99-1.01.
#   bash bench/integration/s57_qslots.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s57q
tree_and_flag_base "64;128;256" "-DFLASHATTN_SM90_NARROW_Q_SLOTS=1"
log builds
sm90_sass_counts "$bld/full" | grep -E "Li1ELi0ELi1ELb0ELb1" | tee -a "$out/summary.txt"
# A first case alone, briefly: the first form hung (Q's expected bytes were the 64-row slot's).
timeout 30 "$tests" --gtest_filter='Grid/KVCacheTest.*cuda_sm90*_b17_*:Grid/KVCacheTest.*cuda_sm90*_b12_*' \
  --gtest_brief=1 >"$out/first.log" 2>&1
first=$?
log "first cases rc=$first $(grep -E '^\[  (PASSED|FAILED)' "$out/first.log" | tr '\n' ' ')"
((first == 0)) || exit 1
ROWS_LIMIT=150 rows_ab s57_qslots.py qslots base new
ROWS_LIMIT=150 rows_ab s57_qslots.py qslots2 new base
cases='Grid/KVCacheTest.*cuda_sm90*_b17_*:Grid/KVCacheTest.*cuda_sm90*_b20_*:Grid/KVCacheTest.*cuda_sm90*_b3*'
cases+=':Grid/ForwardTest.*cuda_sm90*_b20_*:Grid/ForwardTest.*cuda_sm90*_b17_*:Grid/ForwardTest.*cuda_sm90*_b3*'
cases+=':Grid/ForwardTest.*cuda_sm90*_b40_*:Grid/KVCacheTest.*cuda_sm90*_b12_*:ForwardWorkspace*'
gtest_suites "$cases" 50
sanitizer_runs "$tests" "$cases" 70 memcheck racecheck
log total
