#!/usr/bin/env bash
# Session 68, last call: (1) the extension built with FLASHATTN_BACKWARD=OFF (README's quick build) imports and
# runs (it failed before: cuda_sm90's backend referenced cuda_sm80's backward aux kernels, which such a build
# lacks); (2) dropout below 1 / 65536 (threshold 0) takes the plain kernels (forward_dispatch.h drops), as every
# other CUDA kernel does; (3) the dropout suite and Api on the final tree (d 64 / 128).
#   bash bench/integration/s68_last.sh
# Run (the final tree): both builds 55-56 s; suites 21 passed (25 skipped: head dims not built, CPU backends); the
# BACKWARD=OFF extension imported and gave the full build's outputs bitwise (p 0 and 0.1); p = 1e-6 gave the plain
# output bitwise. Record: s68_last_summary.txt.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s68l
PY_DIMS=128 sm90_build_py nobwd "" 6 300 &
tests_and_py_build "64;128"
wait
gtest_suites 'Dropout/ForwardDropoutTest.*cuda*:Grid/ForwardTest.*cuda_sm90*dropout*:Api.*' 60
(cd /tmp && PYTHONPATH=$bld/pyroot timeout 60 python3 "$OLDPWD/bench/integration/s68_last.py") >>"$out/summary.txt" 2>&1
log "nobwd / tiny-p check rc=$?"
log total
