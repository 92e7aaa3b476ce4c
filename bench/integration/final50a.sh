#!/usr/bin/env bash
# Session 50's first call: session 49's final tree (855fe0e) verified (a KV cache's lengths read by the decode kernels, CACHE_LENGTHS; the
# narrow tile's paged tail boxes by TMA with the producer's fix_tail; the decode kernels' row-wise gather):
# scripts/gpu_check.sh's build, tests and python steps (the full build, the ctest sm90_wgmma_pipelines, every C++
# GPU suite, every pytest on the GPU), then compute-sanitizer memcheck and racecheck on every KV-cache case of
# cuda_sm90 (grid and drawn) and the workspace checks, synccheck on the three new KV-cache cases.
# Prediction: every suite passes (final48.sh: 517 C++ GPU tests, 158 pytest; + the 3 new KV-cache cases on each
# CUDA backend), sanitizers clean. One H200 call (~8 minutes).
#   bash bench/integration/final50a.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build tests python" gpu_check_call /tmp/f50
gpu_check_sanitizers /tmp/f50 'Grid/KVCacheTest.*cuda_sm90*:Random/KVCacheRandomTest.*cuda_sm90*:ForwardWorkspace.*' 100 \
  memcheck racecheck
gpu_check_sanitizers /tmp/f50 'Grid/KVCacheTest.*cuda_sm90_*_1x2500_*:Grid/KVCacheTest.*cuda_sm90_*_1x2300_*:Grid/KVCacheTest.*cuda_sm90_*_1x1700_*' \
  60 synccheck
