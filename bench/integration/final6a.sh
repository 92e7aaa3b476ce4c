#!/bin/bash
# Session 6 verification call A on the merged tree: gpu_check (build, suites, sanitizers, PTX-JIT backward), the
# checked backward bench (default + deterministic), float64-checked CLI runs of the paths this session changed:
# sm80 backward static-bulk / no-mask instances (bwd10), sm80 forward d64 non-causal main entry (sm80u table),
# sm90 tile boundary (sm90s: every kernel; short and long rows, paged, GQA, d64 three-consumer), sm90 K/V multicast
# clusters (sm90L: d128 unmasked s >= 2048 with an even number of query blocks; 2100 = 17 blocks runs without).
O=$OUT; export OUT=/tmp/g6a; mkdir -p $OUT; trap 'tar czf $O/x.tgz -C /tmp g6a' EXIT
FLASHATTN_GPU_STEPS="build tests sanitize ptxjit" scripts/gpu_check.sh > $OUT/all.txt 2>&1
cli=build/gpu/tools/cli/flashattn
timeout 70 $cli bench --backend cuda_sm80 --dtype bf16 --backward \
  --head-dims 32,64,128,256 --seqlens 1024 --repeat 3 > $OUT/bwd_bench.txt 2>&1
echo "== checked bwd bench rc=$?" >> $OUT/summary.txt
timeout 70 $cli bench --backend cuda_sm80 --dtype bf16 --backward --deterministic \
  --head-dims 64,128,256 --seqlens 2048 --repeat 3 > $OUT/det_bench.txt 2>&1
echo "== det bench rc=$?" >> $OUT/summary.txt
run() { timeout 60 $cli run --repeat 2 --verify sample "$@" >> $OUT/cli.txt 2>&1; echo "== run [$*] rc=$?" >> $OUT/summary.txt; }
run --backend cuda_sm80 --backward --head-dim 64 --seqlen-q 2048 -b 2 --heads 8
run --backend cuda_sm80 --backward --head-dim 64 --seqlen-q 1024 --seqlen-k 2048 -b 2 --heads 8 --heads-kv 2 --dtype fp16
run --backend cuda_sm80 --backward --head-dim 128 --causal --seqlen-q 1024 -b 2 --heads 8
run --backend cuda_sm80 --backward --head-dim 128 --seqlen-q 1000 -b 2 --heads 8 --sink
run --backend cuda_sm80 --head-dim 64 --seqlen-q 2048 -b 4 --heads 16
run --backend cuda_sm80 --head-dim 64 --seqlen-q 3000 --seqlen-k 2999 -b 2 --heads 8 --dtype fp16 --heads-kv 2
run --backend cuda_sm90 --head-dim 128 --seqlen-q 512 -b 32 --heads 16
run --backend cuda_sm90 --head-dim 256 --causal --seqlen-q 1024 -b 8 --heads 8
run --backend cuda_sm90 --head-dim 64 --causal --seqlen-q 512 -b 32 --heads 32 --heads-kv 8
run --backend cuda_sm90 --head-dim 128 --paged 128 --seqlen-q 700 --seqlen-k 1500 -b 3 --heads 8 --heads-kv 2
run --backend cuda_sm90 --head-dim 128 --seqlen-q 4096 -b 2 --heads 8 --heads-kv 2
run --backend cuda_sm90 --head-dim 128 --seqlen-q 2304 --seqlen-k 3001 -b 2 --heads 4 --dtype fp16 --sink
run --backend cuda_sm90 --head-dim 128 --seqlen-q 2100 --seqlen-k 2500 -b 2 --heads 4 --alibi
run --backend cuda_sm90 --head-dim 96 --seqlen-q 4096 -b 1 --heads 8
run --backend cuda_sm90 --head-dim 64 --causal --seqlen-q 16384 -b 1 --heads 4
run --backend cuda_sm90 --head-dim 64 --window 1000,0 --seqlen-q 16384 -b 1 --heads 4 --heads-kv 2 --sink
run --backend cuda_sm90 --head-dim 64 --paged 256 --seqlen-q 8192 -b 1 --heads 4 --dtype fp16
run --backend cuda_sm90 --head-dim 64 --seqlen-q 8192 --seqlen-k 8000 -b 1 --heads 2 --softcap 20
grep -cE "PASS" $OUT/cli.txt; grep -E "FAIL" $OUT/cli.txt; cat $OUT/summary.txt; grep -E "problems" $OUT/bwd_bench.txt $OUT/det_bench.txt | tail -4
