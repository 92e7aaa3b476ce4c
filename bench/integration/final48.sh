#!/usr/bin/env bash
# Session 48's verification on the final tree (d256 on the narrow tile, the narrow tile's combine, the split count's
# cap): scripts/gpu_check.sh's build, tests and python steps (the full build, the ctest sm90_wgmma_pipelines, every
# C++ GPU suite, every pytest on the GPU), then compute-sanitizer memcheck and racecheck on the KV-cache cases of the
# narrow tile (d128 / d64 / d96 / d256: 8 packed rows causal in pages of 64, MQA in 5 splits, ALiBi in pages of 16, a
# sink with cache_batch_idx, d256's four) and the workspace checks.
# Prediction: every suite passes (final47.sh: 509 C++ GPU tests, 158 pytest; + the 4 new d256 KV-cache cases on each
# CUDA backend and SplitKVPlan's new test on the CPU side), sanitizers clean. One H200 call (~8 minutes).
#   bash bench/integration/final48.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build tests python" gpu_check_call /tmp/f48
filter='Grid/KVCacheTest.*cuda_sm90_*_2x1500_*:Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_2x900_*'
filter+=':Grid/KVCacheTest.*cuda_sm90_*_1x1200_*:Grid/KVCacheTest.*cuda_sm90_*_1x2900_*:Grid/KVCacheTest.*cuda_sm90_*_1x1300_*'
filter+=':ForwardWorkspace.*'
gpu_check_sanitizers /tmp/f48 "$filter" 100 memcheck racecheck
