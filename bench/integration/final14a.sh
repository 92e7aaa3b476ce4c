#!/bin/bash
# Session 14, one device call: final10a.sh's verification (full build, GPU suites incl. the Spread cases on every
# backend, memcheck / racecheck / synccheck, PTX-JIT backward, float64-checked CLI runs) plus final14a_runs.txt,
# on the tuning table with conditional_rescale (issue 4).
#   bash bench/integration/final14a.sh
set -uo pipefail
FINAL_NAME=g14a EXTRA_RUNS=bench/integration/final14a_runs.txt bash bench/integration/final10a.sh
