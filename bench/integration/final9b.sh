#!/bin/bash
# Session 9 verification call B (right after A, machine warm: build/gpu reused): the Python extension, pytest on
# the GPU, then bench/compare.py with every backend settled 200 ms before each timing (sm80a): the forward grid +
# decode in 4 rounds of alternating order, the backward grid in 2.
O=$OUT; export OUT=/tmp/g9b; mkdir -p $OUT; trap 'tar czf $O/x.tgz -C /tmp g9b' EXIT
FLASHATTN_GPU_STEPS="python" scripts/gpu_check.sh > $OUT/all.txt 2>&1
start=$(date +%s)
PYTHONPATH=$PWD/build/pyroot PYTHONUNBUFFERED=1 timeout 330 python3 bench/compare.py --modes fwd --rounds 4 \
  --out $OUT/compare --tag "$(date +%Y%m%d-%H%M%S)-fwd" > $OUT/compare_fwd.log 2>&1
echo "== compare fwd rc=$? in $(( $(date +%s) - start )) s" >> $OUT/summary.txt
start=$(date +%s)
PYTHONPATH=$PWD/build/pyroot PYTHONUNBUFFERED=1 timeout 150 python3 bench/compare.py --modes bwd --rounds 2 \
  --no-decode --out $OUT/compare --tag "$(date +%Y%m%d-%H%M%S)-bwd" > $OUT/compare_bwd.log 2>&1
echo "== compare bwd rc=$? in $(( $(date +%s) - start )) s" >> $OUT/summary.txt
sed -n '/^# /,$p' $OUT/compare_fwd.log $OUT/compare_bwd.log
cat $OUT/summary.txt
