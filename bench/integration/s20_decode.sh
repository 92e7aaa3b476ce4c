#!/usr/bin/env bash
# PREPARED in session 19, not run (the session's device time was spent): where the H200's decode loses to cuDNN,
# and the two-CTA decode kernel (forward_config.h FLASHATTN_SM90_SINGLE_CONSUMER_CTAS=2). Session 19 on an H200:
# our decode reads the cache at 81.9% of the DRAM peak against cuDNN's 95.4% (ncu, b16 32k keys); neither halving
# the tensor work (the one-consumer kernel, +1-2%), a third K/V stage (<1%) nor a contiguous heads-major cache
# (+1.1%) closes it; each SM streams one 64 KB key block per ~2.07 us (cuDNN 1.83). Hypothesis: a consumer
# warpgroup's per-block serial chain (K wait, S GEMM, S wait, softmax, P V) sets that pace. Ask for an H200
# (`kind nvidia-h200`); on an H100 the decode is at 90% of its DRAM peak either way and answers less.
#  1. correctness of c2 (two CTAs per SM, 64-key blocks): the sm90 d128 suites with CTAS=2, racecheck on the
#     decode cases, float64-checked CLI decode runs;
#  2. ncu: occupancy limits, DRAM % of peak and time for new, c2 and cuDNN at b64 8k and b16 32k (two CTAs must
#     be resident per SM for c2: launch__occupancy_limit_* >= 2);
#  3. ncu PC sampling (SourceCounters, -lineinfo build) of new at b64 8k: the share of consumer samples on the
#     k_full / v_full waits (SYNCS.PHASECHK on barrier offsets kBarrierOffset + 8 * (2 + s) / (2 + 2S + s)) against
#     the HGMMA waits and the softmax; the producer's waits on the empty barriers;
#  4. A/B base / new / c2 / control beside cuDNN on decode_ab.py's shapes, two passes.
# Prediction: if the chain sets the pace, the consumers' samples sit mostly outside the full-barrier waits and c2
# reads 1.10-1.20 of new at b64 8k (two chains per SM; 512 tiles on 264 CTA slots), ~1.00 at b16 32k (128 tiles:
# one CTA per SM either way); if the consumers wait on k_full most of the time, memory-level parallelism is the
# lever and c2 still helps at b64 (twice the loads in flight per SM).
#   bash bench/integration/s20_decode.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s20d
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "$out"/tests.txt "$out"/cli.txt "$out"/racecheck.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
c2="-DFLASHATTN_SM90_SINGLE_CONSUMER_CTAS=2"
test_cli_build "128" "bf16;fp16" 4 "$c2" &
sm90_build_py base "-DFLASHATTN_SM90_SINGLE_CONSUMER=0" 4 400 &
sm90_build_py new "-lineinfo" 4 400 &
sm90_build_py c2 "$c2" 4 400 &
wait
suites_and_racecheck '*cuda_sm90*' \
  '*KVCache*cuda_sm90*1x1500*:*KVCache*cuda_sm90*4x700*:*ForwardTest*cuda_sm90*16x239*d128*:*ForwardTest*cuda_sm90*8x300*d128*' 200
cli_runs "--head-dim 128 --seqlen-q 1 --seqlen-k 8192 -b 8 --heads 32 --heads-kv 8" \
  "--head-dim 128 --causal --seqlen-q 4 --seqlen-k 3000 -b 4 --heads 32 --heads-kv 8 --paged 64" \
  "--head-dim 128 --seqlen-q 1 --seqlen-k 5000 -b 6 --heads 16 --heads-kv 2 --paged 256 --dtype fp16" \
  "--head-dim 128 --causal --seqlen-q 64 --seqlen-k 2000 -b 4 --heads 8 --softcap 30"
PYTHONPATH=$bld/pyroot timeout 120 ncu --profile-from-start off --csv --page raw --metrics \
  gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,sm__warps_active.avg.pct_of_peak_sustained_active \
  python3 bench/ncu_decode_target.py --shapes 64:8192,16:32768 --builds new,c2 --cudnn >"$out/ncu_occupancy.csv" 2>/dev/null
log "ncu occupancy rc=$?"
PYTHONPATH=$bld/pyroot timeout 150 ncu --section SourceCounters --section WarpStateStats --profile-from-start off \
  -o "$out/rdec" -f python3 bench/ncu_decode_target.py --shapes 64:8192 --builds new >"$out/ncu_sites.log" 2>&1
log "ncu sites rc=$?"
ncu -i "$out/rdec.ncu-rep" --page source --csv --print-source sass >"$out/sass_sites.csv" 2>/dev/null
ncu -i "$out/rdec.ncu-rep" --page details --csv >"$out/details_sites.csv" 2>/dev/null
log "source page rc=$? $(wc -l <"$out/sass_sites.csv") lines"
sm90_ctrl_copy
for pass in "p1 base,new,c2,ctrl" "p2 ctrl,c2,new,base"; do
  set -- $pass
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 150 python3 bench/decode_ab.py --builds "$2" --rep 60 2>&1 |
    grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" | tee -a "$out/decode.jsonl"
  log "decode $1"
done
log total
