#!/usr/bin/env bash
# Session 46's verification on the final tree (the decode kernel at d64 / d256): scripts/gpu_check.sh's build, tests
# and python steps (the full build, the ctest sm90_wgmma_pipelines, every C++ GPU suite, every pytest on the GPU),
# compute-sanitizer memcheck and racecheck on the KV-cache split cases of every head dim, then s46_dims_rule.py (the
# split count at d64 / d256: auto against explicit counts) with the full build's extension.
# Prediction: every suite passes (final45.sh: 473 C++ GPU tests, 154 pytest), sanitizers clean; auto within ~5% of
# the best explicit count on most rows (the rule was fitted at d128).
# One H200 call (~8 minutes).
#   bash bench/integration/final46.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build tests python" gpu_check_call /tmp/f46
filter='Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_1x2500_*:Grid/KVCacheTest.*cuda_sm90_*_2x1800_*'
filter+=':Grid/KVCacheTest.*cuda_sm90_*_1x1000_*:Grid/KVCacheTest.*cuda_sm90_*_4x2200_*:Grid/KVCacheTest.*cuda_sm90_*_1x2000_*'
filter+=':Grid/KVCacheTest.*cuda_sm90_*_1x3100_*:Grid/KVCacheTest.*cuda_sm90_*_1x2600_*:ForwardWorkspace.*'
gpu_check_sanitizers /tmp/f46 "$filter" 100 memcheck racecheck
# gpu_check's python step left the extension beside a copy of python/flashattn in build/pyroot.
(cd bench/integration && PYTHONPATH=$OLDPWD/build/pyroot timeout 150 python3 s46_dims_rule.py) 2>&1 |
  grep -v Warning >"${OUT:-/tmp}/dims_rule.jsonl"
echo "== dims rule rc=$?" >>"${OUT:-/tmp}/summary.txt"
grep "^#" "${OUT:-/tmp}/dims_rule.jsonl" >>"${OUT:-/tmp}/summary.txt"
