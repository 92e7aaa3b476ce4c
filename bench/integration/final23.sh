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
mapfile -t runs < <(grep -v '^#' bench/integration/final22_runs.txt)
final_call s23f "${runs[@]}" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 2048 -b 4 --heads 8" \
  "--backend cuda_sm90 --head-dim 256 --window 700,0 --seqlen-q 2000 -b 2 --heads 8 --heads-kv 2 --dtype fp16" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 1500 --seqlen-k 2048 -b 2 --heads 8 --softcap 30 --sink" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 3000 --seqlen-k 3333 -b 2 --heads 8 --alibi"
