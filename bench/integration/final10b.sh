#!/bin/bash
# Session 10 verification call B (right after A, machine warm: build/gpu reused): the Python extension, pytest on
# the GPU, then bench/compare.py's forward grid + decode, 4 rounds of alternating order, every backend settled
# 200 ms before each timing. The backward (code unchanged since session 6) is not re-run.
O=$OUT; export OUT=/tmp/g10b; mkdir -p $OUT; trap 'tar czf $O/x.tgz -C /tmp g10b; cp $OUT/summary.txt $O/' EXIT
FLASHATTN_GPU_STEPS="python" scripts/gpu_check.sh > $OUT/all.txt 2>&1
start=$(date +%s)
PYTHONPATH=$PWD/build/pyroot PYTHONUNBUFFERED=1 timeout 380 python3 bench/compare.py --modes fwd --rounds 4 \
  --out $OUT/compare --tag "$(date +%Y%m%d-%H%M%S)-fwd" > $OUT/compare_fwd.log 2>&1
echo "== compare fwd rc=$? in $(( $(date +%s) - start )) s" >> $OUT/summary.txt
sed -n '/^# /,$p' $OUT/compare_fwd.log
cat $OUT/summary.txt
