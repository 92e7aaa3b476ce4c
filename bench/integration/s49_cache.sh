#!/usr/bin/env bash
# Session 49 (issue 6): a KV cache's lengths read by the decode kernels themselves (forward_config.h CACHE_LENGTHS,
# kernel_params.h CacheLengths), against the tree built with CACHE_LENGTHS=0 (the prepare kernel's per-sequence
# maps). One call: the test binary and extension of the tree (d 64 / 96 / 128 / 256, both dtypes), the KV-cache,
# split-KV, workspace and cuda_sm90 suites, memcheck / racecheck on every KV-cache grid case of cuda_sm90 (dense,
# paged, appends, rotary, leftpads, batch indices: both routes), synccheck on the narrow ones, and
# s49_cache_lengths.py's decode rows (dense caches with NaN past the lengths, paged, appends; SDPA beside).
# Prediction (s48_trace.sh's timeline: the first K issued ~3.0 us after the prepare kernel's entry, of which ~1.8
# us the prepare chain and the maps' acquire): dense and paged decodes -1.2 to -1.8 us (0.82-0.88 at 1000 keys
# batch 1-8, ~0.93 at 4k b1, ~0.95 at 16k b1), batch 64 (dynamic schedule: still a prepare kernel, zeroing
# only) ~0.99, appends (the prepare kernel still appends first) -0.3 to -0.8 us.
#   bash bench/integration/s49_cache.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s49a
tree_and_flag_base "64;96;128;256" "-DFLASHATTN_SM90_CACHE_LENGTHS=0"
decode_cache_checks 'Grid/KVCacheTest.*cuda_sm90*'
log total
