#!/bin/bash
# Session 16, last call: final10a.sh's verification (full build, GPU suites, sanitizers, PTX-JIT backward,
# float64-checked CLI runs + final14a_runs.txt's sm80 runs + this session's causal K/V multicast runs) on the final
# tree (causal d128 multicast from 8192 keys, static couples on the multicast kernel), then bench/compare.py's grid +
# decode on it (the standing), with the Python extension built beside the verification.
# (It ran as the steps that are now sm90_device_common.sh final_call.)
#   bash bench/integration/final16.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
final_call s16f \
  "--backend cuda_sm90 --head-dim 64 --seqlen-q 8192 -b 2 --heads 8" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 7680 --seqlen-k 9000 -b 2 --heads 8" \
  "--backend cuda_sm90 --head-dim 128 --window=-1,100 --seqlen-q 8192 --seqlen-k 10000 -b 1 --heads 8 --alibi" \
  "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 16384 -b 1 --heads 8 --softcap 30 --sink" \
  "--backend cuda_sm90 --head-dim 96 --causal --seqlen-q 16384 -b 1 --heads 8"
