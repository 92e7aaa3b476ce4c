#!/bin/bash
# Session 12 verification (the descriptor change in consumer.h); session 10 verification call A: gpu_check (build, suites, sanitizers, PTX-JIT backward), then float64-checked
# CLI runs of this session's paths: the sm90 dynamic schedule with several L2 sections and a grown last one
# (tile_sections.h: long causal, windowed, varlen and GQA problems whose K/V spans more than one section), and
# the sm80 d256 causal <= 2048 table row. `--verify sample` compares the last 128 rows of two heads against the
# reference and (new this session) scans every output row of every sequence and head for poisoned elements, so
# a tile the order missed fails the run.
O=$OUT; export OUT=/tmp/g12a; mkdir -p $OUT; trap 'tar czf $O/x.tgz -C /tmp g12a; cp $OUT/summary.txt $O/' EXIT
FLASHATTN_GPU_STEPS="build tests sanitize ptxjit" scripts/gpu_check.sh > $OUT/all.txt 2>&1
cli=build/gpu/tools/cli/flashattn
run() { timeout 90 $cli run --repeat 2 --verify sample "$@" >> $OUT/cli.txt 2>&1; echo "== run [$*] rc=$?" >> $OUT/summary.txt; }
# sm90: sections of one or a few heads, the last grown (d128 1/8-L2 sections, d256 / d64 half-L2)
run --backend cuda_sm90 --head-dim 128 --causal --seqlen-q 8192 -b 1 --heads 8
run --backend cuda_sm90 --head-dim 128 --causal --seqlen-q 16384 -b 1 --heads 16 --dtype fp16
run --backend cuda_sm90 --head-dim 128 --causal --seqlen-q 8192 -b 1 --heads 16 --heads-kv 4
run --backend cuda_sm90 --head-dim 128 --window 512,0 --seqlen-q 8192 -b 1 --heads 8
run --backend cuda_sm90 --head-dim 128 --causal --varlen --seqlen-q 8192 -b 2 --heads 8
run --backend cuda_sm90 --head-dim 128 --causal --seqlen-q 1 --seqlen-k 8192 -b 8 --heads 32 --heads-kv 8
run --backend cuda_sm90 --head-dim 256 --causal --seqlen-q 4096 -b 1 --heads 16
run --backend cuda_sm90 --head-dim 256 --causal --seqlen-q 8192 -b 1 --heads 16 --dtype fp16 --sink
run --backend cuda_sm90 --head-dim 64 --causal --seqlen-q 16384 -b 1 --heads 32
run --backend cuda_sm90 --head-dim 64 --causal --seqlen-q 4096 -b 4 --heads 32 --dtype fp16
run --backend cuda_sm90 --head-dim 96 --causal --seqlen-q 8192 -b 1 --heads 8 --alibi
# sm90 non-causal: the K/V multicast cluster kernel (d128 >= 2k keys), d64 / d256 static schedule, dv != d
run --backend cuda_sm90 --head-dim 128 --seqlen-q 4096 -b 2 --heads 16
run --backend cuda_sm90 --head-dim 128 --seqlen-q 3000 --seqlen-k 5000 -b 2 --heads 8 --dtype fp16
run --backend cuda_sm90 --head-dim 64 --seqlen-q 8192 -b 1 --heads 32
run --backend cuda_sm90 --head-dim 256 --seqlen-q 2048 -b 2 --heads 8 --softcap 30
run --backend cuda_sm90 --head-dim 192 --head-dim-v 128 --seqlen-q 2048 -b 2 --heads 8
# sm80: the d256 causal single-buffer grouped row now up to 2048 queries
run --backend cuda_sm80 --head-dim 256 --causal --seqlen-q 2048 -b 8 --heads 8
run --backend cuda_sm80 --head-dim 256 --causal --seqlen-q 1500 --seqlen-k 2000 -b 2 --heads 8 --dtype fp16
grep -cE "PASS" $OUT/cli.txt; grep -E "FAIL" $OUT/cli.txt; cat $OUT/summary.txt
