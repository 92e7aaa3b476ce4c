#!/usr/bin/env bash
# PREPARED in session 17 (issue 6), not run (the session's device time was spent): K/V multicast for the d64
# three-consumer kernel (forward_config.h FLASHATTN_SM90_KV_MULTICAST_D64, default 0; ForwardConfig<64, 64, E, 3,
# 0, 2>: 192-row tiles in clusters of two on adjacent query blocks, each CTA loading 64 of every 128-key block's
# rows for both). The d64 rows below the FA3 anchor are the non-causal 8k / 16k ones, which this kernel runs.
# Builds (d64, bf16): base, mc (=2048), a control.
#  1. correctness with the switch at 2048: the sm90 GPU suites (ForwardTest 8400 x 2100 GQA + sink, 8448 x 2100
#     fp16 softcap; ForwardSpreadTest 8448 x 2304 fp16 stddev 40, falling keys), racecheck on them, float64-checked
#     CLI runs (non-causal 8k / 16k, GQA, fp16, sq != sk, ALiBi, softcap + sink);
#  2. ncu time, L2 bytes and DRAM reads at d64 non-causal 8k / 16k, base and mc;
#  3. A/B base / mc / control beside cuDNN at d64 non-causal 2k / 4k (the four-consumer kernel: the same in all
#     builds) and 8k / 16k, three passes.
# Prediction: 8k / 16k +1-3% (the d128 multicast's +1-3%, d64's twice the L2 bytes per FLOP), slower at locked
# clocks with L2 bytes about halved; 2k / 4k identical. Local SASS (nvcc 13.0) in docs/kernel-notes-sm90.md.
# Note the card (H100 or H200) beside the numbers.
#   bash bench/integration/s18_d64mc.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s18d64
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "$out"/tests.txt "$out"/cli.txt "$out"/racecheck.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
flags="-DFLASHATTN_SM90_KV_MULTICAST_D64=2048"
test_cli_build "64" "fp16;bf16" 6 "$flags" &
PY_DIMS="64" sm90_build_py base "" 4 400 &
PY_DIMS="64" sm90_build_py mc "$flags" 4 400 &
wait
suites_and_racecheck '*cuda_sm90*:*Sm90*' \
  '*ForwardTest*cuda_sm90*8400x2100*d64*:*ForwardTest*cuda_sm90*8448x2100*d64*:*Spread*cuda_sm90*8448x2304*d64*' 150
cli_runs "--head-dim 64 --seqlen-q 8192 -b 2 --heads 32" \
  "--head-dim 64 --seqlen-q 16384 -b 1 --heads 32 --dtype fp16" \
  "--head-dim 64 --seqlen-q 8192 -b 2 --heads 32 --heads-kv 8 --alibi" \
  "--head-dim 64 --seqlen-q 9000 --seqlen-k 5000 -b 2 --heads 16 --softcap 30 --sink" \
  "--head-dim 64 --seqlen-q 8448 --seqlen-k 2049 -b 1 --heads 8 --dtype fp16"
PYTHONPATH=$bld/pyroot timeout 90 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum \
  --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py --rows 64:0:8192,64:0:16384 \
  --builds base,mc >"$out/ncu.csv" 2>/dev/null
log "ncu rc=$?"
sm90_ctrl_copy
for pass in "p1 base,mc,ctrl" "p2 ctrl,mc,base" "p3 mc,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 64 0 2048,4096,8192,16384 60 150
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base mc ctrl | tee -a "$out/summary.txt"
log total
