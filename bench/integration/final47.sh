#!/usr/bin/env bash
# Session 47's verification on the final tree (the narrow decode tile, decode_consumer.h): scripts/gpu_check.sh's
# build, tests and python steps (the full build, the ctest sm90_wgmma_pipelines, every C++ GPU suite, every pytest
# on the GPU), then compute-sanitizer memcheck and racecheck on the KV-cache cases of the narrow tile (8 packed
# rows causal in pages of 64, MQA in 5 splits, d64 ALiBi in pages of 16, d96 with a sink, ALiBi over two speculative
# queries in pages of 16 split, MHA with a sink, softcap and a window in 7 splits) and the workspace checks.
# Prediction: every suite passes (final46.sh: 491 C++ GPU tests, 154 pytest), sanitizers clean.
# One H200 call (~8 minutes).
#   bash bench/integration/final47.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build tests python" gpu_check_call /tmp/f47
filter='Grid/KVCacheTest.*cuda_sm90_*_2x1500_*:Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_2x900_*'
filter+=':Grid/KVCacheTest.*cuda_sm90_*_1x1200_*:Grid/KVCacheTest.*cuda_sm90_*_1x2500_*:Grid/KVCacheTest.*cuda_sm90_*_2x1800_*'
filter+=':ForwardWorkspace.*'
gpu_check_sanitizers /tmp/f47 "$filter" 110 memcheck racecheck
