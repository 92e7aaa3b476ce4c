#!/bin/bash
# Session 14, last call: final10a.sh's verification (full build, GPU suites, sanitizers, PTX-JIT backward,
# float64-checked CLI runs + final14a_runs.txt + two three-consumer d64 runs at 128-key blocks) on the final tree
# (the d64 three-consumer kernel at 128-key blocks), then bench/compare.py's grid + decode on it (the standing),
# with the Python extension built beside the verification.
# (It ran as the steps that are now sm90_device_common.sh final_call.)
#   bash bench/integration/final14c.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
final_call s14c \
  "--backend cuda_sm90 --head-dim 64 --seqlen-q 8192 -b 2 --heads 8" \
  "--backend cuda_sm90 --head-dim 64 --seqlen-q 9001 --seqlen-k 7777 -b 1 --heads 8 --heads-kv 2 --dtype fp16 --softcap 20"
