#!/bin/bash
# Session 17, last call: final10a.sh's verification (full build, GPU suites, sanitizers, PTX-JIT backward,
# float64-checked CLI runs + final14a_runs.txt's sm80 runs + session 16's and this session's K/V multicast runs)
# on the final tree (d256 causal K/V multicast from 2048 keys, session 16's d128 causal multicast from 8192), then
# bench/compare.py's grid + decode on it (the standing), with the Python extension built beside the verification.
# (It ran as a copy of final16.sh with these runs; the steps are now sm90_device_common.sh final_call.)
#   bash bench/integration/final17.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
final_call s17f "--backend cuda_sm90 --head-dim 64 --seqlen-q 8192 -b 2 --heads 8" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 7680 --seqlen-k 9000 -b 2 --heads 8" \
  "--backend cuda_sm90 --head-dim 128 --window=-1,100 --seqlen-q 8192 --seqlen-k 10000 -b 1 --heads 8 --alibi" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 16384 -b 1 --heads 8 --softcap 30 --sink" \
  "--backend cuda_sm90 --head-dim 96 --causal --seqlen-q 16384 -b 1 --heads 8" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 2048 -b 8 --heads 8" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 2560 --seqlen-k 2200 -b 2 --heads 4 --dtype fp16" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 2048 --seqlen-k 3000 -b 4 --heads 8 --heads-kv 2 --alibi" \
  "--backend cuda_sm90 --head-dim 256 --window=-1,64 --seqlen-q 2048 -b 4 --heads 8 --sink" \
  "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 16384 -b 1 --heads 8 --softcap 30"
