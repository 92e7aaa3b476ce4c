#!/usr/bin/env bash
# Session 16 (issue 6), on the commit that adds this script: causal K/V multicast on by default from 8192 keys
# (FLASHATTN_SM90_KV_MULTICAST_CAUSAL=8192; s16_mc.sh measured it from 2048). One call:
#  1. correctness of the default build: the d128 sm90 GPU suites (new causal multicast cases at 8192+ keys),
#     racecheck on them, float64-checked CLI runs on the multicast kernel (causal 8k / 16k, GQA, sq != sk, a right
#     window with ALiBi, fp16);
#  2. A/B off (=0) / on (=2048) / ctrl beside cuDNN, d128 causal 2k-16k, three passes (the second reading of
#     s16_mc.sh's mc column);
#  3. bench/compare.py's forward grid on the default build (the standing, with session 15's paired tiles and this).
# Prediction: on / off +1-2.5% at 8k / 16k, within the control at 2k / 4k.
#   bash bench/integration/s16_confirm.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s16cf
trap 'cp -r "$out/summary.txt" "$out"/*.jsonl "$out"/tests.txt "$out"/cli.txt "$out"/racecheck.txt "$out/compare" "${OUT:-/tmp}/" 2>/dev/null' EXIT
test_cli_build "128" "fp16;bf16" 5 &
sm90_build_py off "-DFLASHATTN_SM90_KV_MULTICAST_CAUSAL=0" 2 400 &
sm90_build_py on "-DFLASHATTN_SM90_KV_MULTICAST_CAUSAL=2048" 2 400 &
PY_DIMS="64;128;256" sm90_build_py new "" 7 400 &
wait
tests=$bld/tests/tests/flashattn_tests
timeout 150 "$tests" --gtest_filter='*cuda_sm90*:*Sm90*:*TileSections*' --gtest_brief=1 >"$out/tests.txt" 2>&1
log "sm90 suites rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 3 "$tests" \
  --gtest_filter='*ForwardTest*cuda_sm90*512x8200*:*ForwardTest*cuda_sm90*512x8192*right*:*Spread*cuda_sm90*512x8192*causal*' \
  >"$out/racecheck.txt" 2>&1
log "racecheck rc=$? $(grep -m1 'SUMMARY' "$out/racecheck.txt") $(grep -c '^\[       OK' "$out/racecheck.txt") ok"
cli=$bld/tests/tools/cli/flashattn
for args in "--head-dim 128 --causal --seqlen-q 8192 -b 1 --heads 16" \
  "--head-dim 128 --causal --seqlen-q 16384 -b 1 --heads 16 --dtype fp16" \
  "--head-dim 128 --causal --seqlen-q 8192 -b 1 --heads 16 --heads-kv 4" \
  "--head-dim 128 --causal --seqlen-q 7680 --seqlen-k 9000 -b 2 --heads 8" \
  "--head-dim 128 --window=-1,100 --seqlen-q 8192 --seqlen-k 10000 -b 1 --heads 8 --alibi"; do
  timeout 90 $cli run --backend cuda_sm90 --repeat 2 --verify sample $args >>"$out/cli.txt" 2>&1
  log "cli [$args] rc=$?"
done
rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn_off" "$bld/pyroot/flashattn_ctrl" &&
  sed -i 's/"flashattn_off::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py"
for pass in "p1 off,on,ctrl" "p2 ctrl,on,off" "p3 on,off,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 128 1 2048,4096,8192,16384 60 150
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" off on ctrl | tee -a "$out/summary.txt"
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 300 python3 bench/compare.py --modes fwd --rounds 4 \
  --out "$out/compare" --tag "$(date +%Y%m%d-%H%M%S)-fwd" >"$out/compare_fwd.log" 2>&1
log "compare fwd rc=$?"
sed -n '/^# /,$p' "$out/compare_fwd.log"
log total
