#!/bin/bash
# Session 9 verification call A on the merged tree: gpu_check (build, suites, sanitizers, PTX-JIT backward), the
# checked backward bench, float64-checked CLI runs of this session's new paths (the four-consumer d64 kernel
# unmasked and its masked instance with per-consumer key ranges, the d256 key ranges).
O=$OUT; export OUT=/tmp/g9a; mkdir -p $OUT; trap 'tar czf $O/x.tgz -C /tmp g9a' EXIT
FLASHATTN_GPU_STEPS="build tests sanitize ptxjit" scripts/gpu_check.sh > $OUT/all.txt 2>&1
cli=build/gpu/tools/cli/flashattn
timeout 60 $cli bench --backend cuda_sm80 --dtype bf16 --backward --head-dims 64,128,256 --seqlens 1024 --repeat 3 \
  > $OUT/bwd_bench.txt 2>&1; echo "== checked bwd bench rc=$?" >> $OUT/summary.txt
run() { timeout 60 $cli run --repeat 2 --verify sample "$@" >> $OUT/cli.txt 2>&1; echo "== run [$*] rc=$?" >> $OUT/summary.txt; }
# sm90 d64 four consumers, unmasked (512 <= sq < 8192; sm90r + integrator)
run --backend cuda_sm90 --head-dim 64 --seqlen-q 512 -b 16 --heads 32
run --backend cuda_sm90 --head-dim 64 --seqlen-q 3000 --seqlen-k 2500 -b 2 --heads 32 --heads-kv 8 --dtype fp16
run --backend cuda_sm90 --head-dim 64 --seqlen-q 1500 -b 4 --heads 16 --varlen --softcap 30
# its masked instance with per-consumer key ranges (512 <= sq < 16384)
run --backend cuda_sm90 --head-dim 64 --causal --seqlen-q 512 -b 16 --heads 32
run --backend cuda_sm90 --head-dim 64 --causal --seqlen-q 700 --seqlen-k 900 -b 4 --heads 16 --dtype fp16 --sink
run --backend cuda_sm90 --head-dim 64 --causal --seqlen-q 1200 --seqlen-k 800 -b 2 --heads 16 --heads-kv 4
run --backend cuda_sm90 --head-dim 64 --window 100,0 --seqlen-q 2000 -b 2 --heads 8
run --backend cuda_sm90 --head-dim 64 --window 300,50 --seqlen-q 1024 -b 2 --heads 8 --alibi --dtype fp16
run --backend cuda_sm90 --head-dim 64 --causal --seqlen-q 9000 -b 1 --heads 4 --varlen
run --backend cuda_sm90 --head-dim 64 --causal --seqlen-q 16384 -b 1 --heads 2
# sm90 d256 per-consumer key ranges (sm90v): 64-key blocks (<= 512 keys) and 80-key blocks
run --backend cuda_sm90 --head-dim 256 --causal --seqlen-q 512 -b 8 --heads 8
run --backend cuda_sm90 --head-dim 256 --causal --seqlen-q 300 --seqlen-k 500 -b 4 --heads 8 --heads-kv 2 --dtype fp16
run --backend cuda_sm90 --head-dim 256 --causal --seqlen-q 2048 -b 2 --heads 8 --sink
run --backend cuda_sm90 --head-dim 256 --window 40,0 --seqlen-q 1000 --seqlen-k 1100 -b 2 --heads 8 --dtype fp16
run --backend cuda_sm90 --head-dim 256 --window 100,20 --seqlen-q 900 -b 2 --heads 8 --varlen
# unchanged paths, as a control of the build
run --backend cuda_sm90 --head-dim 128 --causal --seqlen-q 1000 --seqlen-k 1500 -b 4 --heads 16 --dtype fp16
run --backend cuda_sm90 --head-dim 128 --seqlen-q 4096 -b 2 --heads 16 --heads-kv 2
run --backend cuda_sm80 --head-dim 256 --seqlen-q 512 -b 32 --heads 8
run --backend cuda_sm80 --head-dim 64 --causal --seqlen-q 1024 -b 16 --heads 32
grep -cE "PASS" $OUT/cli.txt; grep -E "FAIL" $OUT/cli.txt; cat $OUT/summary.txt; grep -E "problems" $OUT/bwd_bench.txt | tail -2
