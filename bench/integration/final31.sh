#!/usr/bin/env bash
# Session 31, full verification of the final tree (the last one was final29.sh; sessions 30-31 verified their
# sm90 changes, the next tile's Q prefetched early at d128 and in the d256 O-over-V kernel, with the sm90 suites
# only): final10a.sh's steps (full build with the sm80 and sm90a gencodes, every GPU suite, memcheck / racecheck /
# synccheck on the reduced grid, backward under PTX JIT, float64-checked CLI runs: final10a's list,
# final14a_runs.txt's sm80 runs, final22_runs.txt's sm90 runs and the runs below for the paths of sessions
# 28-31), then the Python extension on that build and its pytest suite on the GPU.
# Results: x.tgz and summary.txt (final10a.sh), py_summary.txt (the Python step).
# One H200 call (~8 minutes).
#   bash bench/integration/final31.sh
set -uo pipefail
runs=/tmp/f31-runs.txt
{
  grep -v '^#' bench/integration/final14a_runs.txt
  grep -v '^#' bench/integration/final22_runs.txt
  # unmasked d256 with O over the V stages (session 28): GQA, varlen, paged (the paged kernels store O first)
  echo "--backend cuda_sm90 --head-dim 256 --seqlen-q 1000 -b 2 --heads 8 --heads-kv 2"
  echo "--backend cuda_sm90 --head-dim 256 --varlen --seqlen-q 2048 -b 3 --heads 8 --dtype fp16"
  echo "--backend cuda_sm90 --head-dim 256 --seqlen-q 300 --seqlen-k 4000 -b 2 --heads 8 --heads-kv 2 --paged 64"
  # masked d256 64-key kernels with K one block ahead of V (session 29)
  echo "--backend cuda_sm90 --head-dim 256 --causal --seqlen-q 4096 -b 2 --heads 8 --alibi"
  echo "--backend cuda_sm90 --head-dim 256 --window 500,100 --seqlen-q 3000 -b 2 --heads 8 --dtype fp16"
  # the early Q prefetch (sessions 30-31): d128 unmasked / causal / windowed, d256 O over V from 513 keys
  echo "--backend cuda_sm90 --head-dim 128 --seqlen-q 700 -b 4 --heads 8 --heads-kv 2"
  echo "--backend cuda_sm90 --head-dim 128 --causal --seqlen-q 1000 -b 3 --heads 16 --heads-kv 4 --dtype fp16"
  echo "--backend cuda_sm90 --head-dim 128 --window 300,0 --seqlen-q 3000 -b 2 --heads 8"
  echo "--backend cuda_sm90 --head-dim 256 --seqlen-q 2000 -b 2 --heads 8 --heads-kv 4 --dtype fp16"
  echo "--backend cuda_sm90 --head-dim 256 --seqlen-q 600 --seqlen-k 5000 -b 3 --heads 4"
} >"$runs"
FINAL_NAME=g31 EXTRA_RUNS=$runs timeout 480 bash bench/integration/final10a.sh >/dev/null 2>&1
echo "== final10a rc=$?" >>"$OUT/summary.txt"
OUT=/tmp/g31py FLASHATTN_GPU_STEPS="python" timeout 100 scripts/gpu_check.sh >/dev/null 2>&1
echo "== python step rc=$?" >>"/tmp/g31py/summary.txt"
cp /tmp/g31py/summary.txt "$OUT/py_summary.txt"
cat "$OUT/summary.txt" "$OUT/py_summary.txt"
