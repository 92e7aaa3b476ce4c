#!/bin/bash
# Session 10 verification call A: gpu_check (build, suites, sanitizers, PTX-JIT backward), then float64-checked
# CLI runs of this session's paths: the sm90 dynamic schedule with several L2 sections and a grown last one
# (tile_sections.h: long causal, windowed, varlen and GQA problems whose K/V spans more than one section), and
# the sm80 d256 causal <= 2048 table row. `--verify sample` compares the last 128 rows of two heads against the
# reference and (new this session) scans every output row of every sequence and head for poisoned elements, so
# a tile the order missed fails the run.
# FINAL_NAME (default g10a): the results folder under /tmp (and the tarball's top folder); EXTRA_RUNS: a file of
# further `flashattn run` argument lines (# comments allowed), run after the list below (final12a.sh).
# FINAL_STEPS (default "build tests sanitize ptxjit"): gpu_check.sh's steps (final29.sh adds python: pytest on the GPU).
name=${FINAL_NAME:-g10a}
O=$OUT; export OUT=/tmp/$name; mkdir -p $OUT; trap 'tar czf $O/x.tgz -C /tmp $name; cp $OUT/summary.txt $O/' EXIT
FLASHATTN_GPU_STEPS="${FINAL_STEPS:-build tests sanitize ptxjit}" scripts/gpu_check.sh > $OUT/all.txt 2>&1
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
# sm80: the d256 causal single-buffer grouped row now up to 2048 queries
run --backend cuda_sm80 --head-dim 256 --causal --seqlen-q 2048 -b 8 --heads 8
run --backend cuda_sm80 --head-dim 256 --causal --seqlen-q 1500 --seqlen-k 2000 -b 2 --heads 8 --dtype fp16
if [[ -n ${EXTRA_RUNS:-} ]]; then
  while read -r args; do [[ -z $args || $args == \#* ]] || run $args; done <"$EXTRA_RUNS"
fi
grep -cE "PASS" $OUT/cli.txt; grep -E "FAIL" $OUT/cli.txt; cat $OUT/summary.txt
