#!/bin/bash
# Session 23, last call: final10a.sh's verification (full build, GPU suites, sanitizers, PTX-JIT backward,
# float64-checked CLI runs: final10a's list, final14a_runs.txt's sm80 runs and the runs below) on the final tree
# (this session's defaults: the d128 kernels' per-tile mask range, the d256 kernels on the by-sum softmax, d256
# causal up to 2048 keys on 64-key blocks with placement clusters), then bench/compare.py's grid + decode on it
# (the standing), with the Python extension built beside the verification. Ask for an H200.
#   bash bench/integration/final23.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
final_call s23f "--backend cuda_sm90 --head-dim 128 --seqlen-q 1 --seqlen-k 8192 -b 8 --heads 32 --heads-kv 8 --paged 256" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 4 --seqlen-k 3000 -b 4 --heads 32 --heads-kv 8 --paged 64 --dtype fp16" \
  "--backend cuda_sm90 --head-dim 128 --seqlen-q 300 --seqlen-k 5000 -b 2 --heads 16 --heads-kv 2 --paged 48" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 64 --seqlen-k 2000 -b 4 --heads 8 --softcap 30" \
  "--backend cuda_sm90 --head-dim 128 --seqlen-q 50 --seqlen-k 3000 -b 2 --heads 8 --heads-kv 2 --alibi --sink" \
  "--backend cuda_sm90 --head-dim 128 --causal --varlen --seqlen-q 4096 -b 3 --heads 8 --heads-kv 2" \
  "--backend cuda_sm90 --head-dim 128 --seqlen-q 8192 -b 1 --heads 16 --dtype fp16" \
  "--backend cuda_sm90 --head-dim 128 --window 300,0 --seqlen-q 4096 -b 2 --heads 8 --dtype fp16 --sink" \
  "--backend cuda_sm90 --head-dim 96 --causal --varlen --seqlen-q 2048 -b 3 --heads 8 --dtype fp16" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 16384 -b 1 --heads 8 --softcap 30 --sink" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 512 -b 32 --heads 8" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 1024 --seqlen-k 900 -b 4 --heads 8 --heads-kv 4 --sink" \
  "--backend cuda_sm90 --head-dim 192 --head-dim-v 128 --causal --varlen --seqlen-q 3000 -b 2 --heads 8" \
  "--backend cuda_sm90 --head-dim 64 --head-dim-v 256 --seqlen-q 2048 -b 2 --heads 8" \
  "--backend cuda_sm90 --head-dim 64 --seqlen-q 8192 -b 2 --heads 8" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 2048 -b 4 --heads 8" \
  "--backend cuda_sm90 --head-dim 256 --window 700,0 --seqlen-q 2000 -b 2 --heads 8 --heads-kv 2 --dtype fp16" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 1500 --seqlen-k 2048 -b 2 --heads 8 --softcap 30 --sink" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 3000 --seqlen-k 3333 -b 2 --heads 8 --alibi"
