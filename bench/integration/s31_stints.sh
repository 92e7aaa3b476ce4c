#!/usr/bin/env bash
# Session 31: two d128 switches whose defaults were set by timing that does not see the power cap's energy effect
# (session 26: paired timing gives every build one clock; in 400 ms stints a build's clock follows its own energy),
# read in stints:
#   handoff2: DECODED_HANDOFF=2 (the producer hands the consumers the decoded tile at d128 too; session 25, paired:
#             -0.3..-3.2% on the d128 rows; ~200 fewer SASS instructions per d128 kernel, local nvdisasm);
#   rowsum0:  ROW_SUM_D128=0 (the row sums as FADD trees instead of a ones chunk in the P V GEMM; session 22, before
#             paired timing: the fused form +1.2%; it adds 6.25% to the P V GEMM's tensor work).
# Builds base / handoff2 / rowsum0 (d128), a control copy of base; bench/build_check.py (float64 reference) on every
# build first; 400 ms stints with cuDNN interleaved, two passes: non-causal 1k / 4k / 16k, causal 2k / 8k.
# Prediction: handoff2 -1..+1% (the paired loss at short rows partly offset); rowsum0 -1..+1% at 16k.
# One H200 call (~5 minutes).
#   bash bench/integration/s31_stints.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s31t
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS=128 sm90_build_py base "" 5 300 &
PY_DIMS=128 sm90_build_py handoff2 "-DFLASHATTN_SM90_DECODED_HANDOFF=2" 5 300 &
PY_DIMS=128 sm90_build_py rowsum0 "-DFLASHATTN_SM90_ROW_SUM_D128=0" 5 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy base
PYTHONPATH=$bld/pyroot timeout 120 python3 bench/build_check.py --builds base,handoff2,rowsum0 --hdims 128 \
  >"$out/check.txt" 2>&1
rc=$?
log "build_check rc=$rc $(grep -c '^ok' "$out/check.txt") ok, $(grep -c '^FAIL' "$out/check.txt") FAIL"
[[ $rc == 0 ]] || exit 1
for pass in 1 2; do
  sustained_rows base,ctrl,handoff2,rowsum0 128 0 1024,4096,16384 "p$pass" 400 90
  sustained_rows base,ctrl,handoff2,rowsum0 128 1 2048,8192 "p$pass" 400 70
  log "stints p$pass"
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base ctrl handoff2 rowsum0 | sed -n '/^sustained/,$p' |
  tee -a "$out/summary.txt"
log total
