#!/usr/bin/env bash
# Run in session 38 on 68420d3 + the XML fix (final38_summary.txt, final38_ab.jsonl): build 124 s on 16 cores (2-core
# estimate 11 min), wgmma ctest passed, GPU suites 460 passed / 191 skipped / 0 failed with the three tail cases run,
# pytest 140 passed / 1 skipped; stints d128 non-causal 2k-16k 1.060 / 1.107 / 1.133 / 1.158 of cuDNN (16k 677-684
# TFLOP/s after the suites' four minutes).
# Session 38's verification of the final tree (SPLIT_TAIL=4096 by default: the stream-K tail of the d128 unmasked
# K/V multicast kernel from 4096 keys): scripts/gpu_check.sh's build, tests and python steps (the full build, the
# ctest sm90_wgmma_pipelines, every GPU suite of the test binary with ForwardTailTest and
# DeterminismTest.ForwardManyUnitsRepeat by name, the Python extension with its pytest suite on the GPU), then the
# d128 non-causal rows (the only kernel that changed) in 400 ms stints beside cuDNN on that build, two passes, for
# docs/performance.md.
# Prediction: every suite passes; d128 non-causal 4k-16k 1.13-1.16x cuDNN, 16k ~700 TFLOP/s.
# One H200 call (~8 minutes).
#   bash bench/integration/final38.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build tests python" gpu_check_call /tmp/f38
# The tail cases by name, from the suites' XML (the brief log lists failures only): run, not skipped.
grep -E 'ForwardManyUnitsRepeat/cuda_sm90|MatchesReference/cuda_sm90.*classname="Tail/ForwardTailTest"' \
  /tmp/f38/gpu_tests.xml | grep -oE ' (name|result)="[^"]*"' | paste - - | tee -a "${OUT:-/tmp}/summary.txt"
for pass in p1 p2; do
  PYTHONPATH=$PWD/build/pyroot PYTHONUNBUFFERED=1 timeout 100 python3 bench/sm90r_ab.py --builds new --hdims 128 \
    --causal 0 --seqlens 2048,4096,8192,16384 --sustained 5 --sustained-ms 400 2>&1 | grep -v Warning |
    sed "s/^{/{\"pass\": \"$pass\", /" >>"${OUT:-/tmp}/ab.jsonl"
  echo "== stints $pass rc=$?" | tee -a "${OUT:-/tmp}/summary.txt"
done
python3 bench/integration/ab_summary.py "${OUT:-/tmp}/ab.jsonl" new | tee -a "${OUT:-/tmp}/summary.txt"
