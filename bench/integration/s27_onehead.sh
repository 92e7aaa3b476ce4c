#!/usr/bin/env bash
# Session 27, call 6: the d256 one-head sections (D256_ONE_HEAD_SECTIONS_MIN_SEQLEN 4097: the causal multicast
# instance's static couples take sections of one kv head) confirmed on lengths s27_sec256.sh did not read, with a
# control: new (the rule), old (=0, half-L2 sections), ctrl (a copy of new); 400 ms stints, cuDNN interleaved,
# three passes, d256 causal 6k / 8k / 12k (one head against four / three / two). The GPU suites of d256 first
# (fp16 + bf16: the 4100 / 4352-key causal cases now run one-head sections), racecheck on them.
# Prediction: new / old +1..+2.5% at 8k, +0.5..+2% at 6k / 12k; ctrl / new within 1%.
# One H200 call (~4 minutes).
#   bash bench/integration/s27_onehead.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s27h
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
test_cli_build "256" "fp16;bf16" 6 "" &
PY_DIMS=256 sm90_build_py new "" 5 300 &
PY_DIMS=256 sm90_build_py old "-DFLASHATTN_SM90_D256_ONE_HEAD_SECTIONS_MIN_SEQLEN=0" 5 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
suites_and_racecheck '*cuda_sm90*:*Sm90*' '*cuda_sm90*x4100*:*Spread*cuda_sm90*4352*' 100
suites_summary
rm -f "$out/racecheck.txt"
sm90_ctrl_copy new
for pass in 1 2 3; do
  sustained_rows new,old,ctrl 256 1 6144,8192,12288 "p$pass" 400 80
  log "stints p$pass"
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" new old ctrl | sed -n '/^sustained/,$p' |
  tee -a "$out/summary.txt"
log total
