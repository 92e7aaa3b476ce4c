#!/usr/bin/env bash
# Session 52 (issue 6): the final form of the narrow tile's combines (sum_pieces' second form, with split_kv.h's
# combine kept compiled in behind an always-true row check, which keeps ptxas's schedule of the key-block loop)
# against session 51's tree (s52_combine3.patch reversed), s52_combine.sh's call without the trace: rows, the
# KV-cache / split-KV / workspace / cuda_sm90 suites, memcheck / racecheck / synccheck, pytest on the GPU.
# Prediction (s52_combine2.sh: 8-row tiles 0.70-0.94, the one-unit rows 1.00-1.02, d256 16/8 1.024, with the
# key-block loops 1-15% longer): the 8-row rows as there or ~1% lower, the one-unit rows 0.98-1.00 and d256 16/8
# at or below 1.00.
#   bash bench/integration/s52_combine3.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s52d
tree_copy "$bld/base-tree" bench/integration/s52_combine3.patch -R
(cd "$bld/base-tree" && PY_DIMS="64;128;256" sm90_build_py base "" 5 300) &
tests_and_py_build "64;128;256"
wait
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 200 python3 s52_combine.py base new) 2>&1 |
  grep -v Warning >"$out/combine.jsonl"
log "combine A/B rc=$?"
ab_summary "$out/combine.jsonl"
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*CudaSm90*:*Varlen*cuda_sm90*:*Forward*cuda_sm90*' 220
clusters='Grid/KVCacheTest.*cuda_sm90_*splits24*:Grid/KVCacheTest.*cuda_sm90_*1x40000*'
clusters+=':Grid/KVCacheTest.*cuda_sm90_*splits20*:Grid/KVCacheTest.*cuda_sm90_*1x2500_b1_mqa8_d256*'
clusters+=':Grid/KVCacheTest.*cuda_sm90_*1x4000_*:Grid/KVCacheTest.*cuda_sm90_*gqa12x2_d256*'
sanitizer_runs "$tests" "$clusters" 100 synccheck
sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90*:Random/KVCacheRandomTest.*cuda_sm90*' 150 memcheck racecheck
py_tests_on_gpu test_interface.py test_dispatch.py
log total
