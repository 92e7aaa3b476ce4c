#!/usr/bin/env bash
# Session 49 (issue 6): s49_cache3.sh's steps after the change its racecheck asked for, against the tree of
# session 48 (s49_cache.patch: every src/ change of the session, reversed). racecheck (every KV-cache case of
# cuda_sm90, grid and drawn) had reported the narrow tile's zeroing of V's rows past the end (a consumer's
# st.shared) against the paged producer's cp.async into the same stage: consumers arrive on an empty barrier by
# their warp's leader alone. The paged producer now zeroes those rows itself (producer.h kTailBoxes, fix_tail:
# the tail block's V boxes land on a barrier of its own, tail_full, and the warp completes v_full after its
# stores), so the consumers write no K / V stage of a paged launch; the dense narrow tile keeps the consumer's
# zeroing (its producer writes by TMA alone: racecheck clean in s49_cache.sh).
# Prediction: racecheck and memcheck clean; the paged narrow rows within 0.3 us of s49_cache3.sh's (the producer
# waits for the tail's V after issuing the next block), the other rows as there.
#   bash bench/integration/s49_cache4.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s49d
narrow_cases='Grid/KVCacheTest.*cuda_sm90_*_2x1500_*:Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_1x2900_*'
narrow_cases+=':Grid/KVCacheTest.*cuda_sm90_*_1x1300_*:Grid/KVCacheTest.*cuda_sm90_*_1x1200_*:Grid/KVCacheTest.*cuda_sm90_*_2x900_*'
tree_copy "$bld/base-tree" bench/integration/s49_cache.patch -R
(cd "$bld/base-tree" && PY_DIMS="64;128;256" sm90_build_py base "" 5 400) &
tests_and_py_build "64;96;128;256"
wait
sm90_sass_counts "$bld/full" | grep -E "Li1ELi0ELi1ELb0" | tee -a "$out/summary.txt"
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*CudaSm90*' 200
sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90*:Random/KVCacheRandomTest.*cuda_sm90*' 150 memcheck racecheck
sanitizer_runs "$tests" "$narrow_cases" 100 synccheck
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 200 python3 s49_cache_lengths.py base new) 2>&1 |
  grep -v Warning >"$out/cache.jsonl"
log "cache lengths A/B rc=$?"
ab_summary "$out/cache.jsonl"
log total
