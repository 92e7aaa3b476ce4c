#!/usr/bin/env bash
# Session 33's verification (no kernel changed this session): scripts/gpu_check.sh's build and tests steps on the
# GPU machine, i.e. the full build (sm80 + sm90a, every head-dim bucket, backward), the new ctest
# sm90_wgmma_pipelines over every sm90 kernel translation unit of that build (gpu_check.sh runs it after the build),
# and every GPU suite of the test binary, the new Random suites included (one base seed: the run's own).
# Results: summary.txt, the suites' log tail and the pipeline check's log.
# One H200 call (~7 minutes).
#   bash bench/integration/final33.sh
set -uo pipefail
export PATH=$PATH:/usr/local/cuda/bin
work=/tmp/f33
rm -rf "$work" && mkdir -p "$work"
OUT=$work FLASHATTN_GPU_STEPS="build tests" timeout 560 scripts/gpu_check.sh >"$work/all.txt" 2>&1
echo "== gpu_check rc=$?" >>"$work/summary.txt"
cp "$work/summary.txt" "${OUT:-/tmp}/summary.txt"
tail -60 "$work/wgmma_pipelines.log" >"${OUT:-/tmp}/wgmma_pipelines_tail.txt" 2>/dev/null
grep -E "FAILED|Failure|drawn case" "$work/gpu_tests.log" | head -40 >"${OUT:-/tmp}/gpu_test_failures.txt"
cat "$work/summary.txt"
