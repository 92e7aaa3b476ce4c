#!/bin/bash
# Session 18, last call: final10a.sh's verification (full build, GPU suites, sanitizers, PTX-JIT backward,
# float64-checked CLI runs: final10a's list, final14a_runs.txt's sm80 runs and the runs below) on the final tree
# (session 17's d256 causal K/V multicast from 2048 keys and 64-key d256 kernel for masked rows up to 1024 keys;
# this session's placement clusters for causal d256 rows up to 1024 keys), then bench/compare.py's grid + decode
# on it (the standing), with the Python extension built beside the verification.
#   bash bench/integration/final18.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
final_call s18f "--backend cuda_sm90 --head-dim 64 --seqlen-q 8192 -b 2 --heads 8" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 7680 --seqlen-k 9000 -b 2 --heads 8" \
  "--backend cuda_sm90 --head-dim 128 --window=-1,100 --seqlen-q 8192 --seqlen-k 10000 -b 1 --heads 8 --alibi" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 16384 -b 1 --heads 8 --softcap 30 --sink" \
  "--backend cuda_sm90 --head-dim 96 --causal --seqlen-q 16384 -b 1 --heads 8" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 2048 -b 8 --heads 8" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 2048 --seqlen-k 3000 -b 4 --heads 8 --heads-kv 2 --alibi" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 16384 -b 1 --heads 8 --softcap 30" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 512 -b 32 --heads 8" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 700 -b 4 --heads 8 --dtype fp16" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 1024 --seqlen-k 900 -b 4 --heads 8 --heads-kv 4 --sink" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 896 --seqlen-k 1024 -b 4 --heads 8 --softcap 30" \
  "--backend cuda_sm90 --head-dim 256 --window=-1,200 --seqlen-q 1024 -b 2 --heads 8 --alibi" \
  "--backend cuda_sm90 --head-dim 256 --causal --varlen --seqlen-q 1024 -b 3 --heads 8"
