#!/usr/bin/env bash
# PREPARED in session 18 (issue 6), not run (the session's device time was spent): K issued a block ahead of V
# (forward_config.h FLASHATTN_SM90_K_LEADS_V, default 0): the producer of dense K/V issues K(e-1), K(e-2), V(e-1),
# K(e-3), V(e-2), ..., the order in which each consumer uses them (S(n - 1) before P V(n)); stages unchanged.
# s18_stall_sites.sh (H100) found causal d256 512's consumers waiting on K's full barrier in 13.5% of the warp
# samples at ~71% of DRAM peak, and s18_prefetch_kv.sh that extra requests only queue: the order of the demand
# requests is what is left. Local SASS (nvcc 13.0): default cubins unchanged; with the switch the producers' spills
# are at or below the default's (d256 / d128 / d64 non-paged 4 / 4 / 2 LDL/STL, the cluster instances 0).
# Builds (d64 / d128 / d256, bf16): base, kl (K_LEADS_V 1), a control. Run with kind nvidia-h100-x1 (the short
# rows' gap is the H100's); a second run on an H200 if it helps.
#  1. correctness of kl: the sm90 GPU suites (every kernel family, the multicast clusters, the consumer key ranges'
#     skips), racecheck and synccheck on causal cases, float64-checked CLI runs (causal short and long, GQA,
#     sq != sk, windows, ALiBi, sink, softcap, fp16);
#  2. A/B base / kl / control beside cuDNN: causal d256 / d128 / d64 512, d256 1k and 2k, d128 2k and 8k;
#     non-causal d128 / d256 512, d128 8k, d64 8k; three passes.
# Prediction: kl / base +1-3% at the 512 rows on the H100, within the control at 8k (the K/V come from L2 there).
#   bash bench/integration/s19_k_leads_v.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s19kl
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/tests.txt "$out"/cli.txt "$out"/racecheck.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
kl="-DFLASHATTN_SM90_K_LEADS_V=1"
test_cli_build "64;128;256" "bf16;fp16" 4 "$kl" &
PY_DIMS="64;128;256" sm90_build_py base "" 5 400 &
PY_DIMS="64;128;256" sm90_build_py kl "$kl" 5 400 &
wait
suites_and_racecheck '*cuda_sm90*:*Sm90*:*ConsumerKeyRange*' \
  '*ForwardTest*cuda_sm90*causal*:*ConsumerKeyRange*causal*' 200
timeout 90 compute-sanitizer --tool synccheck --error-exitcode 3 "$bld/tests/tests/flashattn_tests" \
  --gtest_filter='*ForwardTest*cuda_sm90*causal*' --gtest_brief=1 >"$out/synccheck.txt" 2>&1
log "synccheck rc=$? $(grep -m1 'SUMMARY' "$out/synccheck.txt")"
cli_runs "--head-dim 256 --causal --seqlen-q 512 -b 32 --heads 8" \
  "--head-dim 256 --causal --seqlen-q 4096 -b 2 --heads 8 --heads-kv 2 --dtype fp16" \
  "--head-dim 128 --causal --seqlen-q 8192 -b 1 --heads 16 --softcap 30 --sink" \
  "--head-dim 128 --seqlen-q 1000 --seqlen-k 3001 -b 3 --heads 8 --alibi" \
  "--head-dim 64 --causal --seqlen-q 2048 -b 4 --heads 16 --heads-kv 4" \
  "--head-dim 64 --seqlen-q 8192 -b 2 --heads 32 --dtype fp16" \
  "--head-dim 128 --window 300,200 --seqlen-q 3000 -b 2 --heads 8"
sm90_ctrl_copy
for pass in "p1 base,kl,ctrl" "p2 ctrl,kl,base" "p3 kl,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 1 512,1024,2048 60 80
  sm90_ab "$1" "$2" 128 1 512,2048,8192 60 80
  sm90_ab "$1" "$2" 64 1 512 60 40
  sm90_ab "$1" "$2" 128 0 512,8192 60 60
  sm90_ab "$1" "$2" 256 0 512 60 40
  sm90_ab "$1" "$2" 64 0 8192 60 40
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base kl ctrl | tee -a "$out/summary.txt"
log total
