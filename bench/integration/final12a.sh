#!/bin/bash
# Session 12 verification of the kept change (the wgmma descriptors in consumer.h): final10a.sh's checks (build,
# suites, sanitizers, PTX-JIT backward, float64-checked CLI runs) plus the runs in final12a_runs.txt. As run on the
# H200 (record final12a_summary.txt) the five extra runs came before final10a.sh's two sm80 runs; here they follow.
#   bash bench/integration/final12a.sh
FINAL_NAME=g12a EXTRA_RUNS=bench/integration/final12a_runs.txt exec bash bench/integration/final10a.sh
