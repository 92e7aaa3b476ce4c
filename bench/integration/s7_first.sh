#!/bin/bash
# Session 7, first call on main 4a446bb: build + GPU suites (incl. the never-GPU-run bf16 varlen determinism
# case Backends/DeterminismTest.BackwardVarlenGqaBf16/cuda_sm80), then paged vs dense forward timings on both
# CUDA backends (the session-6 lead: sm90 paged d64 fp16 page 256 8192x8192 b1 h4 read 675 us).
O=$OUT; export OUT=/tmp/s7a; mkdir -p $OUT; trap 'tar czf $O/x.tgz -C /tmp s7a' EXIT
FLASHATTN_GPU_STEPS="build tests" scripts/gpu_check.sh > $OUT/all.txt 2>&1
t=build/gpu/tests/flashattn_tests
timeout 60 $t --gtest_filter='*Determinism*cuda*' > $OUT/det.txt 2>&1; echo "== determinism rc=$?" >> $OUT/summary.txt
cli=build/gpu/tools/cli/flashattn
r() { echo "## $*" >> $OUT/paged.txt; timeout 40 $cli run --repeat 20 --verify none "$@" >> $OUT/paged.txt 2>&1; }
for be in cuda_sm90 cuda_sm80; do for d in 64 128; do
  for shape in "-b 1 --heads 4 --seqlen-q 8192" "-b 4 --heads 16 --seqlen-q 4096" "-b 8 --heads 8 --heads-kv 2 --seqlen-q 2048"; do
    r --backend $be --head-dim $d $shape --dtype fp16
    for pg in 16 64 128 256; do r --backend $be --head-dim $d $shape --dtype fp16 --paged $pg; done
  done
done; done
cat $OUT/summary.txt; grep -E "OK|FAILED" $OUT/det.txt | head -20
