#!/usr/bin/env bash
# Prepared in session 65 (not run): the check of session 65's last change, made after its device time (the
# backward postprocess writes the rows past seqused_q as zeros without reading their accumulator rows, which
# the tiled preprocess no longer zeroes): every CUDA backward suite on both backends (the varlen cases with
# seqused among them) and memcheck over the varlen backward grid cases.
#   bash bench/integration/s66_checks.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s66c
tests_and_py_build "64;128;256"
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda*varlen*:-*dropout*' 120 memcheck
log total
