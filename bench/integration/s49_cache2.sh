#!/usr/bin/env bash
# Session 49 (issue 6): s49_cache.sh's change (a KV cache's lengths read by the decode kernels, CACHE_LENGTHS) plus
# the narrow tile's paged tail boxes by TMA (producer.h kTailBoxes; the consumer zeroes V's rows past the end),
# against the tree of session 48 (s49_cache.patch reversed). s49_cache.sh had read paged decodes of 1000 keys at
# 22.1 us (pages of 64) and 17.6 (pages of 16) against 8.7 dense: the gather of the tail block's box past the
# sequence's last key. One call: the test binary and extension of the tree (d 64 / 96 / 128 / 256, both dtypes),
# the KV-cache, split-KV, workspace and cuda_sm90 suites, memcheck / racecheck on every KV-cache grid case of
# cuda_sm90, synccheck on the narrow ones, s49_cache_lengths.py's rows.
# Prediction: paged 1000-key narrow rows 22 -> ~9 us (as dense); paged 64/4 (64-row tile, gathered) 1000 keys
# ~10 us slower than 1024; the other rows as in s49_cache.sh (0.83-0.98 of base, b64 1.00).
#   bash bench/integration/s49_cache2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin "${1:-s49b}"  # s49_cache3.sh: s49c, s49_cache4.sh: s49d, s49_cache5.sh: s49e
tree_copy "$bld/base-tree" bench/integration/s49_cache.patch -R
(cd "$bld/base-tree" && PY_DIMS="64;128;256" sm90_build_py base "" 5 400) &
tests_and_py_build "64;96;128;256"
wait
decode_cache_checks 'Grid/KVCacheTest.*cuda_sm90*:Random/KVCacheRandomTest.*cuda_sm90*'
log total
