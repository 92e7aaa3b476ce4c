#!/usr/bin/env bash
# Session 17 (issue 6): the d256 64-key kernel for masked problems up to 1024 keys as the default
# (FLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED 512 -> 1024 after s17_l2_short.sh: causal 1k 1.037 against a
# control at 1.017 on an H100). The default build's d256 sm90 GPU suites (ConsumerKeyRange's 64-key cases now up
# to 1024 keys, new 80-key ones past it), racecheck on the key-range cases, float64-checked CLI runs between 512
# and 1024 keys (causal, sq != sk both ways, a sliding window, GQA, ALiBi, fp16), and the A/B old (=512) / new /
# control beside cuDNN at d256 causal 512 / 1k / 2k (512 and 2k: the same kernels), three passes, on whatever
# card the call gets. Prediction: 1k +1-3% on an H100, 0.99-1.01 on an H200.
#   bash bench/integration/s17_b64_confirm.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s17b64
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/tests.txt "$out"/cli.txt "$out"/racecheck.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
test_cli_build "256" "fp16;bf16" 8 &
PY_DIMS="256" sm90_build_py base "-DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=512" 4 300 &
PY_DIMS="256" sm90_build_py new "" 4 300 &
wait
suites_and_racecheck '*cuda_sm90*:*Sm90*' '*ConsumerKeyRange*d256*' 100
cli_runs "--head-dim 256 --causal --seqlen-q 1024 -b 16 --heads 8" \
  "--head-dim 256 --causal --seqlen-q 1000 --seqlen-k 1001 -b 2 --heads 8 --alibi --dtype fp16" \
  "--head-dim 256 --causal --seqlen-q 1024 --seqlen-k 900 -b 2 --heads 8 --heads-kv 2" \
  "--head-dim 256 --causal --seqlen-q 700 --seqlen-k 1024 -b 3 --heads 8 --sink" \
  "--head-dim 256 --window=300,0 --seqlen-q 1024 -b 2 --heads 8 --dtype fp16"
sm90_ctrl_copy
for pass in "p1 base,new,ctrl" "p2 ctrl,new,base" "p3 new,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 1 512,1024,2048 60 40
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base new ctrl | tee -a "$out/summary.txt"
log total
