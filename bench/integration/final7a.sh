#!/bin/bash
# Session 7 verification call A on the merged tree: gpu_check (build, suites, sanitizers, PTX-JIT backward), the
# checked backward bench, float64-checked CLI runs of this session's new paths, paged vs dense timings.
O=$OUT; export OUT=/tmp/g7a; mkdir -p $OUT; trap 'tar czf $O/x.tgz -C /tmp g7a' EXIT
FLASHATTN_GPU_STEPS="build tests sanitize ptxjit" scripts/gpu_check.sh > $OUT/all.txt 2>&1
cli=build/gpu/tools/cli/flashattn
timeout 60 $cli bench --backend cuda_sm80 --dtype bf16 --backward --head-dims 64,128,256 --seqlens 1024 --repeat 3 \
  > $OUT/bwd_bench.txt 2>&1; echo "== checked bwd bench rc=$?" >> $OUT/summary.txt
run() { timeout 60 $cli run --repeat 2 --verify sample "$@" >> $OUT/cli.txt 2>&1; echo "== run [$*] rc=$?" >> $OUT/summary.txt; }
# sm90: uniform consumer everywhere (d192 untimed), split Q on d64 (two and three consumers, packed GQA) and d256
run --backend cuda_sm90 --head-dim 192 --seqlen-q 1024 -b 4 --heads 8
run --backend cuda_sm90 --head-dim 192 --head-dim-v 128 --causal --seqlen-q 2000 -b 2 --heads 8 --dtype fp16
run --backend cuda_sm90 --head-dim 64 --seqlen-q 512 -b 32 --heads 32
run --backend cuda_sm90 --head-dim 64 --causal --seqlen-q 4096 -b 2 --heads 16 --heads-kv 4
run --backend cuda_sm90 --head-dim 64 --seqlen-q 8192 -b 1 --heads 8 --sink --dtype fp16
run --backend cuda_sm90 --head-dim 64 --seqlen-q 40 --seqlen-k 4096 -b 4 --heads 32 --heads-kv 4
run --backend cuda_sm90 --head-dim 256 --causal --seqlen-q 1024 -b 8 --heads 8
run --backend cuda_sm90 --head-dim 256 --seqlen-q 30 --seqlen-k 3000 -b 4 --heads 16 --heads-kv 2 --dtype fp16
run --backend cuda_sm90 --head-dim 128 --seqlen-q 512 -b 32 --heads 16
run --backend cuda_sm90 --head-dim 128 --seqlen-q 4096 -b 2 --heads 16
# sm90 paged: two-consumer kernel at d64, TMA boxes of R rows per page (sm90p), straddling pages, leftpad-free
run --backend cuda_sm90 --head-dim 64 --paged 256 --seqlen-q 4096 -b 2 --heads 8 --dtype fp16
run --backend cuda_sm90 --head-dim 64 --paged 192 --seqlen-q 4096 --seqlen-k 4000 -b 2 --heads 8 --heads-kv 2
run --backend cuda_sm90 --head-dim 64 --paged 128 --causal --seqlen-q 2048 -b 2 --heads 8
run --backend cuda_sm90 --head-dim 128 --paged 16 --seqlen-q 3000 --seqlen-k 3100 -b 2 --heads 8 --heads-kv 2
run --backend cuda_sm90 --head-dim 256 --paged 256 --causal --seqlen-q 1000 --seqlen-k 2000 -b 2 --heads 8 --dtype fp16
run --backend cuda_sm90 --head-dim 128 --paged 48 --seqlen-q 1 --seqlen-k 5000 -b 4 --heads 32 --heads-kv 8
# sm80: grouped order (production group size), approximate epilogue
run --backend cuda_sm80 --head-dim 64 --causal --seqlen-q 2048 -b 8 --heads 32
run --backend cuda_sm80 --head-dim 128 --causal --seqlen-q 1024 -b 16 --heads 16 --dtype fp16
run --backend cuda_sm80 --head-dim 128 --seqlen-q 512 -b 32 --heads 16
run --backend cuda_sm80 --head-dim 64 --causal --seqlen-q 16384 -b 1 --heads 32 --heads-kv 8
# sm80 d256 (early_k_copy, panel_loads, qk_step_ahead, mask_bounds), paged loaders (kPagedLoads)
run --backend cuda_sm80 --head-dim 256 --seqlen-q 2048 -b 4 --heads 8
run --backend cuda_sm80 --head-dim 256 --causal --seqlen-q 1000 --seqlen-k 1100 -b 4 --heads 8 --dtype fp16
run --backend cuda_sm80 --head-dim 256 --seqlen-q 8192 -b 1 --heads 8 --heads-kv 2
run --backend cuda_sm80 --head-dim 64 --paged 48 --seqlen-q 3000 -b 2 --heads 8 --heads-kv 2 --dtype fp16
run --backend cuda_sm80 --head-dim 128 --paged 200 --causal --seqlen-q 2000 -b 2 --heads 8
run --backend cuda_sm80 --head-dim 256 --paged 16 --seqlen-q 1000 -b 2 --heads 4
run --backend cuda_sm80 --head-dim 96 --paged 1 --seqlen-q 300 --seqlen-k 700 -b 2 --heads 4 --dtype fp16
r() { echo "## $*" >> $OUT/paged.txt; timeout 60 $cli run --repeat 20 --verify none "$@" >> $OUT/paged.txt 2>&1; }
for be in cuda_sm90 cuda_sm80; do for d in 64 128 256; do
  for shape in "-b 1 --heads 4 --seqlen-q 8192" "-b 4 --heads 16 --seqlen-q 4096"; do
    [[ $d != 128 && $shape == *4096* ]] && continue
    r --backend $be --head-dim $d $shape --dtype fp16
    for pg in 16 48 64 128 192 256; do r --backend $be --head-dim $d $shape --dtype fp16 --paged $pg; done
  done
done; done
# paged decode (q len 1, GQA 32/8, d128, 8192 keys, batch 8): sm90's boxes of 16 rows vs sm80's split-KV
for be in cuda_sm90 cuda_sm80; do for pg in 16 64 256; do
  r --backend $be --head-dim 128 --seqlen-q 1 --seqlen-k 8192 -b 8 --heads 32 --heads-kv 8 --paged $pg
done; r --backend $be --head-dim 128 --seqlen-q 1 --seqlen-k 8192 -b 8 --heads 32 --heads-kv 8; done
grep -cE "PASS" $OUT/cli.txt; grep -E "FAIL" $OUT/cli.txt; cat $OUT/summary.txt; grep -E "problems" $OUT/bwd_bench.txt | tail -2
