#!/usr/bin/env bash
# Session 51 (issue 6): the two-level cluster combine (decode_consumer.h, forward_launch.h, split_kv_plan.h SplitKV
# groups) against the tree before it (s51_groups.patch reversed). One call: the test binary and extension (d 64 /
# 128 / 256, both dtypes) and the base extension; bench/integration/s51_groups.py's rows; the KV-cache, split-KV,
# workspace, cuda_sm90 forward / varlen suites; pytest's interface and dispatch files on the GPU; memcheck /
# racecheck on every KV-cache case of cuda_sm90 (grid and drawn), synccheck on the cluster cases.
# Prediction: one K/V head at 65000 keys ~16-18 us in 15 clusters of 8 against 25 in the counter's 32 (0.65-0.7),
# 130000 keys ~0.6 of base, 32000 keys ~0.8; 16100 keys and the guard rows unchanged (the rule keeps one cluster
# there); 24 pieces asked at 3000 keys within ~10% of the counter's; suites pass, sanitizers clean.
#   bash bench/integration/s51_groups.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s51d
tree_copy "$bld/base-tree" bench/integration/s51_groups.patch -R
(cd "$bld/base-tree" && PY_DIMS="64;128;256" sm90_build_py base "" 5 300) &
tests_and_py_build "64;128;256"
wait
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 200 python3 s51_groups.py base new) 2>&1 |
  grep -v Warning >"$out/groups.jsonl"
log "groups A/B rc=$?"
ab_summary "$out/groups.jsonl"
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*CudaSm90*:*Varlen*cuda_sm90*:*Forward*cuda_sm90*' 220
clusters='Grid/KVCacheTest.*cuda_sm90_*splits24*:Grid/KVCacheTest.*cuda_sm90_*1x40000*'
clusters+=':Grid/KVCacheTest.*cuda_sm90_*splits32*:Grid/KVCacheTest.*cuda_sm90_*splits12*'
clusters+=':Grid/KVCacheTest.*cuda_sm90_*1x4000_*:Grid/KVCacheTest.*cuda_sm90_*1x3000_b1_gqa16x8*'
sanitizer_runs "$tests" "$clusters" 100 synccheck
sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90*:Random/KVCacheRandomTest.*cuda_sm90*' 150 memcheck racecheck
py_tests_on_gpu test_interface.py test_dispatch.py
log total
