#!/usr/bin/env bash
# Session 35's verification of the final tree (Q in registers now also in the d128 paged instances and the d192
# kernels, REGISTER_Q_D192=1): scripts/gpu_check.sh's build, tests, python and compare steps on the GPU machine, i.e.
# the full build (sm80 + sm90a, every head-dim bucket, backward), the ctest sm90_wgmma_pipelines over every sm90
# kernel translation unit, every GPU suite of the test binary (one base seed: the run's own), the Python extension
# added to that build with its pytest suite, and one bench/compare.py forward grid (two rounds) for the standing.
# Results: summary.txt, the suites' failures (if any), the grid (compare.tgz).
# One H200 call (~8 minutes).
#   bash bench/integration/final35.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
gpu_check_call /tmp/f35
