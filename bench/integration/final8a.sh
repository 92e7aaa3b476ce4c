#!/bin/bash
# Session 8 verification call A on the merged tree: gpu_check (build, suites, sanitizers, PTX-JIT backward), the
# checked backward bench, float64-checked CLI runs of this session's new paths, paged vs dense timings.
O=$OUT; export OUT=/tmp/g8a; mkdir -p $OUT; trap 'tar czf $O/x.tgz -C /tmp g8a' EXIT
FLASHATTN_GPU_STEPS="build tests sanitize ptxjit" scripts/gpu_check.sh > $OUT/all.txt 2>&1
cli=build/gpu/tools/cli/flashattn
timeout 60 $cli bench --backend cuda_sm80 --dtype bf16 --backward --head-dims 64,128,256 --seqlens 1024 --repeat 3 \
  > $OUT/bwd_bench.txt 2>&1; echo "== checked bwd bench rc=$?" >> $OUT/summary.txt
run() { timeout 60 $cli run --repeat 2 --verify sample "$@" >> $OUT/cli.txt 2>&1; echo "== run [$*] rc=$?" >> $OUT/summary.txt; }
# sm90 head-major order (sm90t: unmasked equal-length rows, d <= 128 incl. d96 through the d128 kernel) and the
# 1/8-L2 sections of the d128 dynamic schedules
run --backend cuda_sm90 --head-dim 128 --seqlen-q 512 -b 32 --heads 16
run --backend cuda_sm90 --head-dim 64 --seqlen-q 1024 -b 16 --heads 32 --dtype fp16
run --backend cuda_sm90 --head-dim 96 --seqlen-q 2048 -b 4 --heads 16 --heads-kv 4
run --backend cuda_sm90 --head-dim 128 --seqlen-q 4096 -b 2 --heads 16 --heads-kv 2
run --backend cuda_sm90 --head-dim 128 --causal --seqlen-q 512 -b 32 --heads 16
run --backend cuda_sm90 --head-dim 128 --causal --seqlen-q 1000 --seqlen-k 1500 -b 4 --heads 16 --dtype fp16
# sm90 d256 64-key kernel (sm90k: <= 512 keys, paged pages multiple of 32) and the 80-key kernel beside it
run --backend cuda_sm90 --head-dim 256 --seqlen-q 512 -b 32 --heads 8
run --backend cuda_sm90 --head-dim 256 --causal --seqlen-q 384 -b 8 --heads 8 --dtype fp16
run --backend cuda_sm90 --head-dim 256 --seqlen-q 300 --seqlen-k 500 -b 4 --heads 8 --heads-kv 2 --alibi
run --backend cuda_sm90 --head-dim 256 --seqlen-q 1024 -b 8 --heads 8
run --backend cuda_sm90 --head-dim 256 --paged 64 --seqlen-q 2048 -b 2 --heads 8 --dtype fp16
run --backend cuda_sm90 --head-dim 256 --paged 32 --causal --seqlen-q 1000 --seqlen-k 2000 -b 2 --heads 8
run --backend cuda_sm90 --head-dim 256 --paged 256 --seqlen-q 1 --seqlen-k 5000 -b 4 --heads 16 --heads-kv 4
run --backend cuda_sm90 --head-dim 256 --paged 48 --seqlen-q 2048 -b 2 --heads 8
# sm80 table rows of this session (sm80a: d256 X A; sm80b: d128 J R A X / R A X, d64 causal 2k grouped)
run --backend cuda_sm80 --head-dim 256 --seqlen-q 512 -b 32 --heads 8
run --backend cuda_sm80 --head-dim 256 --seqlen-q 2048 -b 8 --heads 8 --dtype fp16
run --backend cuda_sm80 --head-dim 256 --causal --seqlen-q 512 -b 32 --heads 8
run --backend cuda_sm80 --head-dim 256 --causal --seqlen-q 1024 -b 16 --heads 8
run --backend cuda_sm80 --head-dim 128 --seqlen-q 512 -b 32 --heads 16
run --backend cuda_sm80 --head-dim 128 --seqlen-q 2000 -b 8 --heads 16 --heads-kv 4
run --backend cuda_sm80 --head-dim 128 --seqlen-q 16384 -b 1 --heads 16
run --backend cuda_sm80 --head-dim 64 --causal --seqlen-q 2048 -b 8 --heads 32
run --backend cuda_sm80 --head-dim 64 --causal --seqlen-q 1500 -b 4 --heads 32 --heads-kv 8 --dtype fp16
# sm90 score-mask forms (sm90m + integrator): bit masks on the d128 kernel (d96 runs it), with and without a left
# bound; the comparison form on d64
run --backend cuda_sm90 --head-dim 128 --window 100,0 --seqlen-q 2048 -b 2 --heads 8
run --backend cuda_sm90 --head-dim 128 --window -1,64 --seqlen-q 1000 --seqlen-k 1200 -b 2 --heads 8 --dtype fp16
run --backend cuda_sm90 --head-dim 96 --causal --seqlen-q 777 -b 3 --heads 8
run --backend cuda_sm90 --head-dim 64 --window 50,50 --seqlen-q 1500 -b 2 --heads 8
# sm90 head-major order for the d192 / d256 / (64, 256) kernels (sm90o)
run --backend cuda_sm90 --head-dim 192 --seqlen-q 1024 -b 8 --heads 8
run --backend cuda_sm90 --head-dim 64 --head-dim-v 256 --seqlen-q 512 -b 16 --heads 8 --dtype fp16
run --backend cuda_sm90 --head-dim 256 --seqlen-q 2048 -b 4 --heads 8 --heads-kv 2
r() { echo "## $*" >> $OUT/paged.txt; timeout 60 $cli run --repeat 20 --verify none "$@" >> $OUT/paged.txt 2>&1; }
for be in cuda_sm90 cuda_sm80; do for d in 64 128 256; do
  for shape in "-b 1 --heads 4 --seqlen-q 8192" "-b 4 --heads 16 --seqlen-q 4096"; do
    [[ $d != 128 && $shape == *4096* ]] && continue
    r --backend $be --head-dim $d $shape --dtype fp16
    for pg in 16 32 48 64 128 192 256; do r --backend $be --head-dim $d $shape --dtype fp16 --paged $pg; done
  done
done; done
# paged decode (q len 1, GQA 32/8, d128, 8192 keys, batch 8): sm90's boxes of 16 rows vs sm80's split-KV
for be in cuda_sm90 cuda_sm80; do for pg in 16 64 256; do
  r --backend $be --head-dim 128 --seqlen-q 1 --seqlen-k 8192 -b 8 --heads 32 --heads-kv 8 --paged $pg
done; r --backend $be --head-dim 128 --seqlen-q 1 --seqlen-k 8192 -b 8 --heads 32 --heads-kv 8; done
grep -cE "PASS" $OUT/cli.txt; grep -E "FAIL" $OUT/cli.txt; cat $OUT/summary.txt; grep -E "problems" $OUT/bwd_bench.txt | tail -2
