#!/bin/bash
# Session 7, integrator: the sm80 forward's paged loaders for kGeneral problems too (a fourth kernel per
# shape). Build (compile-time sum), the sm80 KV-cache + varlen suites (their paged softcap/ALiBi/dropout cases),
# memcheck on the small ones, float64-checked CLI runs, paged-vs-dense timings with softcap / ALiBi.
O=$OUT; export OUT=/tmp/s7g; mkdir -p $OUT; trap 'tar czf $O/x.tgz -C /tmp s7g' EXIT
FLASHATTN_GPU_STEPS="build" scripts/gpu_check.sh > $OUT/all.txt 2>&1
t=build/gpu/tests/flashattn_tests
timeout 90 $t --gtest_filter='*KVCache*cuda_sm80*:*Varlen*cuda_sm80*:*Forward*cuda_sm80*' --gtest_brief=1 > $OUT/suites.txt 2>&1
echo "== sm80 suites rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $OUT/suites.txt | tr '\n' ' ')" >> $OUT/summary.txt
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 3 $t --gtest_brief=1 \
  --gtest_filter='Grid/KVCacheTest.*cuda_sm80_3?_*:Grid/VarlenTest.*cuda_sm80_3?_*' > $OUT/memcheck.txt 2>&1
echo "== memcheck rc=$? $(grep -m1 'ERROR SUMMARY' $OUT/memcheck.txt)" >> $OUT/summary.txt
cli=build/gpu/tools/cli/flashattn
run() { timeout 60 $cli run --repeat 2 --verify sample "$@" >> $OUT/cli.txt 2>&1; echo "== run [$*] rc=$?" >> $OUT/summary.txt; }
run --backend cuda_sm80 --head-dim 128 --paged 16 --softcap 30 --causal --seqlen-q 2000 -b 2 --heads 8 --heads-kv 2
run --backend cuda_sm80 --head-dim 64 --paged 48 --alibi --seqlen-q 1500 -b 2 --heads 8 --dtype fp16
run --backend cuda_sm80 --head-dim 256 --paged 256 --softcap 20 --seqlen-q 1000 --seqlen-k 1300 -b 2 --heads 4
run --backend cuda_sm80 --head-dim 96 --paged 3 --dropout 0.1 --seqlen-q 300 --seqlen-k 700 -b 2 --heads 4 --dtype fp16
r() { echo "## $*" >> $OUT/paged.txt; timeout 60 $cli run --repeat 20 --verify none "$@" >> $OUT/paged.txt 2>&1; }
for d in 64 128; do for opt in "--softcap 30" "--alibi"; do
  r --backend cuda_sm80 --head-dim $d -b 1 --heads 4 --seqlen-q 8192 --dtype fp16 $opt
  for pg in 16 128; do r --backend cuda_sm80 --head-dim $d -b 1 --heads 4 --seqlen-q 8192 --dtype fp16 $opt --paged $pg; done
done; done
grep -cE "PASS" $OUT/cli.txt; grep -E "FAIL" $OUT/cli.txt; cat $OUT/summary.txt
grep -E "^##|time " $OUT/paged.txt | paste - - | sed 's/ --dtype fp16//'
