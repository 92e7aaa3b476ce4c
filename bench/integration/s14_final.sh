#!/usr/bin/env bash
# Session 14, last device call: (1) the d64 masked four-consumer bound removed (FLASHATTN_SM90_D64_ALT_MAX_SEQLEN_MASKED
# 16384 -> 0: causal d64 from 16k queries runs the four-consumer kernel, s14_d64alt.sh) checked in float64 by the CLI
# at and past 16k (odd lengths, fp16, GQA, a window); (2) bench/compare.py's grid + decode on this tree (the
# standing after both of this session's changes; the second reading of the sm80 table with conditional_rescale).
#   bash bench/integration/s14_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s14g
trap 'cp -r "$out/summary.txt" "$out/cli.txt" "$out/compare" "${OUT:-/tmp}/" 2>/dev/null' EXIT
PY_DIMS="64;128;256" sm90_build_py new "" 10 300 &
(cmake -S . -B "$bld/cli" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_HEAD_DIMS=64 \
   -DFLASHATTN_DTYPES="fp16;bf16" -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
   -DFLASHATTN_BUILD_CLI=ON -DFLASHATTN_BUILD_EXAMPLES=OFF >"$out/cli_configure.log" 2>&1 &&
   timeout 300 cmake --build "$bld/cli" -j 6 >"$out/cli_build.log" 2>&1
 log "cli build rc=$?") &
wait
cli=$bld/cli/tools/cli/flashattn
run() { timeout 90 "$cli" run --repeat 2 --verify sample "$@" >>"$out/cli.txt" 2>&1; log "run [$*] rc=$?"; }
run --backend cuda_sm90 --head-dim 64 --causal --seqlen-q 16384 -b 1 --heads 16
run --backend cuda_sm90 --head-dim 64 --causal --seqlen-q 20001 -b 1 --heads 4 --dtype fp16
run --backend cuda_sm90 --head-dim 64 --causal --seqlen-q 16500 --seqlen-k 17000 -b 1 --heads 8 --heads-kv 2
run --backend cuda_sm90 --head-dim 64 --window 1000,0 --seqlen-q 16384 -b 1 --heads 4 --sink
run --backend cuda_sm90 --head-dim 64 --causal --varlen --seqlen-q 16384 -b 2 --heads 4 --alibi
log "cli PASS lines $(grep -c PASS "$out/cli.txt"), FAIL lines $(grep -c FAIL "$out/cli.txt")"
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 330 python3 bench/compare.py --modes fwd --rounds 4 \
  --out "$out/compare" --tag "$(date +%Y%m%d-%H%M%S)-fwd" >"$out/compare_fwd.log" 2>&1
log "compare fwd rc=$?"
sed -n '/^# /,$p' "$out/compare_fwd.log"
