#!/usr/bin/env bash
# Session 52 (issue 6): the first work item's cache length prefetched into L1 at the decode kernels' entry
# (producer.h prefetch_first_lengths) against the tree before it (s52_prefetch.patch reversed), s52_combine3.sh's
# call: bench/integration/s52_prefetch.py's rows, the KV-cache / split-KV / workspace / cuda_sm90 suites,
# memcheck / racecheck / synccheck, pytest on the GPU.
# Prediction (s52_first.sh's trace: the producer's barriers-to-first-tile 1.22 us, most of it the cold read of the
# length after the barriers and the register handover, ~0.5 us later than the entry): 0.2-0.5 us off every
# decode call (0.96-0.99 of the time), none on the split-free MHA row's share (the same read).
#   bash bench/integration/s52_prefetch.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s52e
tree_copy "$bld/base-tree" bench/integration/s52_prefetch.patch -R
(cd "$bld/base-tree" && PY_DIMS="64;128;256" sm90_build_py base "" 5 300) &
tests_and_py_build "64;128;256"
wait
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 200 python3 s52_prefetch.py base new) 2>&1 |
  grep -v Warning >"$out/prefetch.jsonl"
log "prefetch A/B rc=$?"
ab_summary "$out/prefetch.jsonl"
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*CudaSm90*:*Varlen*cuda_sm90*:*Forward*cuda_sm90*' 220
clusters='Grid/KVCacheTest.*cuda_sm90_*splits24*:Grid/KVCacheTest.*cuda_sm90_*1x40000*'
clusters+=':Grid/KVCacheTest.*cuda_sm90_*splits20*:Grid/KVCacheTest.*cuda_sm90_*1x2500_b1_mqa8_d256*'
clusters+=':Grid/KVCacheTest.*cuda_sm90_*1x4000_*:Grid/KVCacheTest.*cuda_sm90_*gqa12x2_d256*'
sanitizer_runs "$tests" "$clusters" 100 synccheck
sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90*:Random/KVCacheRandomTest.*cuda_sm90*' 150 memcheck racecheck
py_tests_on_gpu test_interface.py test_dispatch.py
log total
