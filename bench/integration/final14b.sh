#!/bin/bash
# Session 14, last call: final10a.sh's verification (full build, GPU suites incl. the new d64 Spread cases on
# main's kernels, memcheck / racecheck / synccheck, PTX-JIT backward, float64-checked CLI runs) plus
# final14a_runs.txt, on the final tree (the sm80 table with conditional_rescale and the d64 masked bound 0).
#   bash bench/integration/final14b.sh
set -uo pipefail
FINAL_NAME=g14b EXTRA_RUNS=bench/integration/final14a_runs.txt bash bench/integration/final10a.sh
