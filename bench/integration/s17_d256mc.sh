#!/usr/bin/env bash
# Prepared in session 16 (issue 6), run in session 17 on 3dcaa1a (an H200; records s17_d256mc_*): K/V multicast for the d256 kernel
# (FLASHATTN_SM90_KV_MULTICAST_D256 unmasked, _D256_CAUSAL causal, both default 0; ForwardConfig kMulticastByChunk:
# the 80-key blocks cannot be split by rows on 1 KB swizzle atoms, so each CTA of a cluster loads two of the four
# 64-column chunks of every K and V block for both; causal: static couples and the masked cluster instance, whose
# lower query block may skip three blocks with two stages, kEagerSkipRelease). One build "mc" carries both switches:
# its non-causal rows measure the first, its causal rows the second. Local SASS (nvcc 13.0): the unmasked / masked
# cluster instances 3680 / 3808 instructions, 42 HGMMA, a 16-byte spill pair (the other d256 instances 8 or 0), no
# C75xx.
#  1. correctness with both switches at 2048: the sm90 GPU suites (ForwardTest 512 x 2100 GQA ALiBi sink, 256 x 2304
#     fp16 softcap, causal 512 x 2100 GQA, a right window 512 x 2304 fp16; ForwardSpreadTest 512 x 2304 fp16 stddev 40
#     and causal bf16), racecheck on them, float64-checked CLI runs (d256 non-causal and causal 8k / 16k, GQA,
#     sq != sk, fp16);
#  2. ncu time and L2 / DRAM bytes at d256 non-causal 8k, base and mc;
#  3. A/B base / mc (=2048) / ctrl beside cuDNN, d256 non-causal and causal 1k-16k (1k: below the threshold, the
#     control row), three passes.
# Prediction: non-causal +1-2% at 4k-16k (the d128 kernel's multicast: +1-3%), slower at locked clocks with L2 bytes
# about halved; causal +1-3% at 8k / 16k (d128 causal: +1.6-3.9%), 2k / 4k within the control or below it (d128
# causal 2k: -1.4 / -4.8%). Note the card (H100 or H200) beside the numbers.
#   bash bench/integration/s17_d256mc.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s17mc
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "$out"/tests.txt "$out"/cli.txt "$out"/racecheck.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
flags="-DFLASHATTN_SM90_KV_MULTICAST_D256=2048 -DFLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=2048"
test_cli_build "256" "fp16;bf16" 6 "$flags" &
PY_DIMS="256" sm90_build_py base "" 4 400 &
PY_DIMS="256" sm90_build_py mc "$flags" 4 400 &
wait
suites_and_racecheck '*cuda_sm90*:*Sm90*' \
  '*ForwardTest*cuda_sm90*512x2100*d256*:*ForwardTest*cuda_sm90*256x2304*d256*:*ForwardTest*cuda_sm90*512x2304*d256*rightwin*:*Spread*cuda_sm90*512x2304*d256*' \
  150
cli_runs "--head-dim 256 --seqlen-q 8192 -b 2 --heads 8" \
  "--head-dim 256 --seqlen-q 16384 -b 1 --heads 8 --dtype fp16" \
  "--head-dim 256 --seqlen-q 4096 -b 2 --heads 8 --heads-kv 2 --alibi" \
  "--head-dim 256 --seqlen-q 3000 --seqlen-k 5000 -b 2 --heads 8 --softcap 30 --sink" \
  "--head-dim 256 --causal --seqlen-q 8192 -b 2 --heads 8" \
  "--head-dim 256 --causal --seqlen-q 16384 -b 1 --heads 8 --heads-kv 2 --dtype fp16" \
  "--head-dim 256 --causal --seqlen-q 3072 --seqlen-k 5000 -b 2 --heads 8 --alibi" \
  "--head-dim 256 --window=-1,100 --seqlen-q 4096 -b 2 --heads 8"
for b in base mc; do
  PYTHONPATH=$bld/pyroot timeout 60 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum \
    --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py --rows 256:0:8192,256:1:16384 \
    --builds $b >"$out/ncu_$b.csv" 2>/dev/null
  log "ncu $b rc=$?"
done
sm90_ctrl_copy
for pass in "p1 base,mc,ctrl" "p2 ctrl,mc,base" "p3 mc,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 0,1 1024,2048,4096,8192,16384 60 200
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base mc ctrl | tee -a "$out/summary.txt"
log total
