#!/usr/bin/env bash
# Run in session 37 (s37_counter_summary.txt): co / base 0.997-1.004 on every row; not kept, the switch removed
# afterwards: this script needs the tree of 4893700.
# COUNTER_OVERLAP=1: the dynamic schedule's tile counter of a batched problem zeroed by a one-thread kernel that
# starts the forward kernel as its programmatic dependent (as PREPARE_OVERLAP does after the prepare kernel, +2.7%
# on 2k-token varlen calls) instead of cudaMemsetAsync followed by the launch in stream order.
# Builds: the C++ tests and CLI with the switch (d128 / d256, fp16 + bf16) and the Python extension twice (base, co;
# d64 / d128 / d256 bf16). Every sm90 suite with the switch, racecheck / synccheck on causal forward cases (the
# dynamic schedule); then base against co with cuDNN in 400 ms stints, two passes of five rounds: causal rows of
# 2k query tokens per call (calls of ~5-30 us, where a microsecond shows) and the grid's shortest causal rows
# (16k tokens).
# Prediction: co / base +1..+4% on the 2k-token rows, +0..+0.5% on the 16k-token rows.
# One H200 call (~6 minutes).
#   bash bench/integration/s37_counter.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s37c
flags="-DFLASHATTN_SM90_COUNTER_OVERLAP=1"
switch_builds co "$flags" "128;256" "64;128;256" 300
rm -f "$out"/py_*_build.log
race='*ForwardTest*cuda_sm90*d128_bf16_causal*:*ForwardTest*cuda_sm90*d256_*_causal*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 150
suites_summary
synccheck_on "$race" 60
cli_runs "-b 2 --heads 16 --seqlen-q 1000 --seqlen-k 1000 --head-dim 128 --causal" \
  "-b 3 --heads 8 --seqlen-q 700 --seqlen-k 1500 --head-dim 256 --causal"
cli_summary
# rows PASS TOKENS HDIM SEQLENS: stints of base and co with cuDNN interleaved (sm90r_ab.py --sustained).
rows() {
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 120 python3 bench/sm90r_ab.py --builds "base,co" --hdims "$3" \
    --causal 1 --seqlens "$4" --tokens "$2" --sustained 5 --sustained-ms 400 2>&1 | grep -v Warning |
    sed "s/^{/{\"pass\": \"$1\", /" >>"$out/ab.jsonl"
  log "rows $1 $2 tokens d$3"
}
for pass in p1 p2; do
  rows "$pass" 2048 128 512,1024,2048
  rows "$pass" 2048 256 512,2048
  rows "$pass" 2048 64 1024
  rows "$pass" 16384 64 512
  rows "$pass" 16384 128 512
done
sustained_summary base co
log total
