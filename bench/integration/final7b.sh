#!/bin/bash
# Session 7 verification call B (right after A, machine warm: build/gpu reused): the Python extension, pytest on
# the GPU, the compare-order check (bench/sm90w_order_check.py), bench/compare.py (2 rounds, alternating order).
O=$OUT; export OUT=/tmp/g7b; mkdir -p $OUT; trap 'tar czf $O/x.tgz -C /tmp g7b' EXIT
FLASHATTN_GPU_STEPS="python" scripts/gpu_check.sh > $OUT/all.txt 2>&1
PYTHONPATH=$PWD/build/pyroot timeout 60 python3 bench/sm90w_order_check.py > $OUT/order_check.jsonl 2>&1
echo "== order check rc=$?" >> $OUT/summary.txt
start=$(date +%s)
PYTHONPATH=$PWD/build/pyroot PYTHONUNBUFFERED=1 timeout 400 python3 bench/compare.py --out $OUT/compare > $OUT/compare.log 2>&1
echo "== compare rc=$? in $(( $(date +%s) - start )) s" >> $OUT/summary.txt
sed -n '/^# /,$p' $OUT/compare.log
cat $OUT/summary.txt
