#!/usr/bin/env bash
# Session 14 (issue 6): the conditional O rescale on the d64 kernels again. Session 3 measured it at dv = 64 at
# -3.5% on the two-consumer 128 x 128 kernel of the time; since then the d64 rows run the four-consumer kernel
# (64-key blocks, 512 <= sq < 8k non-causal / < 16k causal) and the three-consumer one (192 x 96), both with the row
# sums on the tensor cores, where a block's O rescale (36 FMUL per thread with the sums' columns) is a larger share
# of the softmax's ~32 values per thread, and session 13 found that instructions on each block's path count ~1:1.
# (s14_d64.sh's other way, the maxima off the path, lost 6-17%: it serialises the softmax after P V.)
# Builds (d64 bf16): base (main), c64 (FLASHATTN_SM90_CONDITIONAL_RESCALE_MIN_DV=64), c64a (the same with the
# four-consumer kernel at every length from 512: D64_ALT_MAX_SEQLEN{,_MASKED}=0), a control; two passes beside
# cuDNN. A test build with MIN_DV=64 runs the sm90 suites (incl. the d64 Spread cases) and racecheck.
# Prediction: c64 +1-3% on the four-consumer rows, 0-2% on the three-consumer rows; c64a: 8k / 16k within +-2% of c64.
#   bash bench/integration/s14_d64cond.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s14e
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/tests.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
PY_DIMS=64 sm90_build_py base "" 4 300 &
PY_DIMS=64 sm90_build_py c64 "-DFLASHATTN_SM90_CONDITIONAL_RESCALE_MIN_DV=64" 4 300 &
PY_DIMS=64 sm90_build_py c64a "-DFLASHATTN_SM90_CONDITIONAL_RESCALE_MIN_DV=64 -DFLASHATTN_SM90_D64_ALT_MAX_SEQLEN=0 -DFLASHATTN_SM90_D64_ALT_MAX_SEQLEN_MASKED=0" 4 300 &
test_build . 64 "fp16;bf16" "-DFLASHATTN_SM90_CONDITIONAL_RESCALE_MIN_DV=64" 4 &
wait
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
sm90_ab p1 base,c64,c64a,ctrl 64 0,1 512,1024,2048,4096,8192,16384 40 200
sm90_ab p2 ctrl,c64a,c64,base 64 0,1 512,1024,2048,4096,8192,16384 40 200
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base c64 c64a ctrl | tee -a "$out/summary.txt"
suites_and_racecheck '*cuda_sm90*:-*GarbageIndices*' '*Spread*cuda_sm90*d64*'
log total
