#!/usr/bin/env bash
# Session 22: FLASHATTN_SM90_RESCALE_BY_SUM_D64 (forward_config.h kBySumD64): the d = dv = 64 kernels with the
# conditional rescale and softmax_update_by_sum, which the shifted bit-test trigger (this session's d128 change)
# makes possible where the row sums are on the tensor cores (the three- and four-consumer kernels): no row maxima
# and no O rescale on the common path (~64 FMNMX + 4 SHFL + 36 FMUL + 2 MUFU per block and thread at 128 keys)
# for ~16 LOP3 and a vote. 1: two- and three-consumer kernels; 2: the four-consumer one (112 registers) too.
# Local SASS (d64 bf16): spills as the default (4 B), no C751x. Prediction: +2..+5% on the d64 rows from 2k
# (session 13's d128 by-sum: +1-7%), the four-consumer rows (512..2k non-causal) -2..+3%.
# One call: d64 suites with =2 (fp16 + bf16), racecheck, then default / =1 / =2 / control over three passes (d64,
# causal and not, 512..16k). Ask for an H200.
#   bash bench/integration/s22_bysum64.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s22b
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
test_cli_build "64" "fp16;bf16" 6 "-DFLASHATTN_SM90_RESCALE_BY_SUM_D64=2" &
PY_DIMS=64 sm90_build_py base "" 3 400 &
PY_DIMS=64 sm90_build_py bs1 "-DFLASHATTN_SM90_RESCALE_BY_SUM_D64=1" 3 400 &
PY_DIMS=64 sm90_build_py bs2 "-DFLASHATTN_SM90_RESCALE_BY_SUM_D64=2" 3 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
suites_and_racecheck '*cuda_sm90*:*Sm90*' '*ForwardTest*cuda_sm90*128x217*:*ForwardSpread*cuda_sm90*d64*' 100
grep -E "^\[  (PASSED|FAILED)|Failure" "$out/tests.txt" | head -30 >>"$out/summary.txt"
rm -f "$out/tests.txt"
cli_runs "--head-dim 64 --seqlen-q 8192 -b 2 --heads 8" "--head-dim 64 --causal --seqlen-q 16384 -b 1 --heads 8 --dtype fp16 --sink" \
  "--head-dim 64 --seqlen-q 1024 -b 8 --heads 16 --heads-kv 4" "--head-dim 64 --causal --seqlen-q 4096 -b 2 --heads 8 --softcap 30"
grep -E "FAIL|PASS" "$out/cli.txt" | sort | uniq -c >>"$out/summary.txt"
rm -f "$out/cli.txt"
sm90_ctrl_copy
sm90_ab_passes "p1 base,bs1,bs2,ctrl;p2 ctrl,bs2,bs1,base;p3 bs1,base,ctrl,bs2" "64" 512,1024,2048,4096,8192,16384 60 120
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base bs1 bs2 ctrl | tee -a "$out/summary.txt"
log total
