#!/bin/bash
# Session 6 verification call B (right after A, machine warm: build/gpu reused): the Python extension, pytest on
# the GPU, bench/compare.py (flashattn beside SDPA FA2 / cuDNN, same process).
O=$OUT; export OUT=/tmp/g6b; mkdir -p $OUT; trap 'tar czf $O/x.tgz -C /tmp g6b' EXIT
FLASHATTN_GPU_STEPS="python compare" scripts/gpu_check.sh > $OUT/all.txt 2>&1
cat $OUT/summary.txt
