#!/usr/bin/env bash
# Session 26, call 3: the new defaults (the causal K/V multicast off at d128 and d256, the d256 64-key blocks and
# placement clusters on causal rows to 4096 keys) verified, and the standing at the paired timing's resolution.
#  - GPU suites of d128 and d256 (fp16 + bf16; every other kernel is unchanged), racecheck and synccheck on the
#    Spread / forward cases that used to run the multicast kernels (2304, 4352 and 8192 keys) and on the new
#    512 x 4096 causal cases (64-key blocks on placement clusters), float64-checked CLI runs.
#  - The standing (s26_standing.sh's first half): the default build and a control copy beside cuDNN in the
#    interleaved calls (sm90r_ab.py --paired-peer), d64 / d128 / d256, causal and not, 512..16k, three passes;
#    paired_standing.py gives ours / cuDNN and the FA3-normalised ratio per row. Prediction: ours / cuDNN within 1%
#    of the grid's mean over sessions 23 and 25 (d128 causal 8k / 16k and d256 causal 4k / 8k 2-4% above it),
#    control / cuDNN equal to ours within 0.3%.
# One H200 call (~8 minutes).
#   bash bench/integration/s26_verify.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s26v
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
test_cli_build "128;256" "fp16;bf16" 8 "" &
PY_DIMS="64;128;256" sm90_build_py new "" 8 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
race='*Spread*cuda_sm90*2304*:*Spread*cuda_sm90*4352*:*cuda_sm90*x8192*:*cuda_sm90_*512x4096*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 150
suites_summary
synccheck_on "$race" 90
rm -f "$out/racecheck.txt"
cli_runs "--head-dim 128 --causal --seqlen-q 8192 -b 1 --heads 16 --heads-kv 4" \
  "--head-dim 128 --causal --seqlen-q 16384 -b 1 --heads 8 --heads-kv 8 --dtype fp16" \
  "--head-dim 256 --causal --seqlen-q 4096 -b 2 --heads 8 --heads-kv 2 --sink" \
  "--head-dim 256 --causal --seqlen-q 3000 --seqlen-k 4000 -b 2 --heads 8 --softcap 30 --dtype fp16" \
  "--head-dim 256 --causal --seqlen-q 8192 -b 1 --heads 8 --heads-kv 4"
cli_summary
sm90_ctrl_copy new
for pass in 1 2 3; do
  for d in 64 128 256; do
    PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 100 python3 bench/sm90r_ab.py --builds new,ctrl --hdims "$d" \
      --causal 1,0 --seqlens 512,1024,2048,4096,8192,16384 --rep 30 --paired 30 --paired-only --paired-peer 2>&1 |
      grep -v Warning | sed "s/^{/{\"pass\": \"p$pass\", /" >>"$out/ab.jsonl"
    log "paired standing p$pass d $d"
  done
done
# (On the device this step failed: the FA3 anchor is not there. The record was read here afterwards.)
(cd bench/integration && python3 paired_standing.py "$out/ab.jsonl" new && python3 paired_standing.py "$out/ab.jsonl" ctrl |
  tail -1) | tee -a "$out/summary.txt"
log total
