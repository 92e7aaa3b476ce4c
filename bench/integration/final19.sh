#!/bin/bash
# Session 19, last call: final10a.sh's verification (full build, GPU suites, sanitizers, PTX-JIT backward,
# float64-checked CLI runs: final10a's list, final14a_runs.txt's sm80 runs and the runs below) on the final tree
# (this session's one-consumer decode kernel, forward_config.h use_single_consumer), then bench/compare.py's grid +
# decode on it (the standing), with the Python extension built beside the verification.
#   bash bench/integration/final19.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
final_call s19f "--backend cuda_sm90 --head-dim 128 --seqlen-q 1 --seqlen-k 8192 -b 8 --heads 32 --heads-kv 8 --paged 256" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 4 --seqlen-k 3000 -b 4 --heads 32 --heads-kv 8 --paged 64 --dtype fp16" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 64 --seqlen-k 2000 -b 4 --heads 8 --softcap 30" \
  "--backend cuda_sm90 --head-dim 128 --seqlen-q 50 --seqlen-k 3000 -b 2 --heads 8 --heads-kv 2 --alibi --sink" \
  "--backend cuda_sm90 --head-dim 128 --window=-1,100 --seqlen-q 8192 --seqlen-k 10000 -b 1 --heads 8 --alibi" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 16384 -b 1 --heads 8 --softcap 30 --sink" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 512 -b 32 --heads 8" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 1024 --seqlen-k 900 -b 4 --heads 8 --heads-kv 4 --sink" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 16384 -b 1 --heads 8 --softcap 30" \
  "--backend cuda_sm90 --head-dim 64 --seqlen-q 8192 -b 2 --heads 8"
