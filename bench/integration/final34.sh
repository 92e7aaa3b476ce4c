#!/usr/bin/env bash
# Session 34's verification of the final tree (REGISTER_Q=1 the default: the d128 two-consumer kernels' S GEMM with
# Q's fragments in registers): scripts/gpu_check.sh's build, tests, python and compare steps on the GPU machine, i.e.
# the full build (sm80 + sm90a, every head-dim bucket, backward), the ctest sm90_wgmma_pipelines over every sm90
# kernel translation unit, every GPU suite of the test binary (one base seed: the run's own), the Python extension
# added to that build with its pytest suite, and one bench/compare.py forward grid (two rounds) for the standing.
# Results: summary.txt, the suites' failures (if any), the grid (compare.tgz).
# One H200 call (~8 minutes).
#   bash bench/integration/final34.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
gpu_check_call /tmp/f34
