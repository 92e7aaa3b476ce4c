#!/usr/bin/env bash
# Session 47 (issue 6): the narrow decode tile with block i + 1's S^T GEMM issued beside block i's probabilities
# and block i - 1's O^T GEMM (s47_overlap.patch; base: the tree with it reversed, s47_narrow.sh's kernel). One
# call: the test binary and the extension of the tree (d 64 / 96 / 128, both dtypes), the sm90 suites,
# racecheck / synccheck on the narrow cases, the narrow rows A/B (s46_decode_dims.py), the split-count sweep of
# the narrow kernel (s46_dims_rule.py), and tests/python's interface and dispatch files on the GPU.
# Prediction: suites pass, sanitizers clean; 0.90-0.97 of base where pieces have several blocks (4k-16k keys),
# ~1.0 at one-block pieces (1k); the automatic split count within 5% of the best explicit one except at 1k keys.
#   bash bench/integration/s47_overlap.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s47o
tree_copy "$bld/base-tree" bench/integration/s47_overlap.patch -R
(cd "$bld/base-tree" && PY_DIMS="64;96;128" sm90_build_py base "" 5 400) &
tests_and_py_build "64;96;128"  # sets tests
wait
rm -f "$out"/py_*_configure.log
sm90_sass_counts "$bld/full" | grep -E "Li1ELi0ELi1ELb0ELb1" | tee -a "$out/summary.txt"
gtest_suites '*KVCache*cuda_sm90*:*Forward*cuda_sm90*:*SplitKV*:*Workspace*:*Determinism*' 150
narrow_cases='Grid/KVCacheTest.*cuda_sm90_*_2x1500_*:Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_2x900_*:Grid/KVCacheTest.*cuda_sm90_*_1x1200_*:Grid/KVCacheTest.*cuda_sm90_*_2x1800_*'
sanitizer_runs "$tests" "$narrow_cases" 90 racecheck synccheck
(cd bench/integration && PYTHONPATH=$bld/pyroot FLASHATTN_DIMS_ROWS=narrow timeout 100 python3 s46_decode_dims.py base new) 2>&1 |
  grep -v Warning >"$out/narrow.jsonl"
log "narrow A/B rc=$?"
ab_summary "$out/narrow.jsonl"
(cd bench/integration && PYTHONPATH=$bld/pyroot FLASHATTN_DIMS_ROWS=narrow timeout 120 python3 s46_dims_rule.py) 2>&1 |
  grep -v Warning >"$out/rule.jsonl"
log "split sweep rc=$?"
grep "^#" "$out/rule.jsonl" >>"$out/summary.txt"
py_tests_on_gpu test_interface.py test_dispatch.py
log total
