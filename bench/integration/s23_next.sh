#!/usr/bin/env bash
# Prepared in session 22, not run (no device time left). Two leads from session 22's results:
# (1) d256 on the by-sum softmax (FLASHATTN_SM90_RESCALE_BY_SUM=2: every kernel with the conditional rescale; the
#     d256 kernels keep their sums in the softmax, so the sum trigger). Session 13 read +0.5% (0.96-1.04 per row) on
#     older d256 kernels; session 22's d64 by-sum read +5..+14%, far above its prediction. Local SASS (d256 bf16,
#     22's tree): spills as the default (0 / 8 / 16 B), no C751x, +176 static instructions per kernel (the exact way).
#     Prediction: +1..+3% on the d256 rows, the five below the FA3 anchor among them.
# (2) causal d64 512, the one row below cuDNN (0.968): it runs the four-consumer kernel (D64_ALT_MIN_SEQLEN_MASKED
#     512), the only four-consumer row the by-sum softmax did not lift (0.996). With the threshold at 1024 it runs
#     the two-consumer kernel (128 x 128, sum trigger). Prediction: -3..+4%.
# (3) d128 with the mask decisions per tile (FLASHATTN_SM90_TILE_MASK_RANGE=1; session 5 read it neutral on a loop
#     ~60 instructions longer). Local SASS (22's tree, d128 bf16 cluster kernel): from the last P V HGMMA to the
#     softmax branch ~20 instructions instead of ~46 on the causal path and ~30 non-causal; spills as the
#     default. Prediction: +0.5..+2%, causal more than non-causal.
# One call: d256 suites with (1) (fp16 + bf16), racecheck; A/B of (1) on d256 (three passes), of (2) on d64
# 512 / 1k (three passes) and of (3) on d128 (three passes; (3)'s suites next time if it pays). Ask for an H200.
#   bash bench/integration/s23_next.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s23n
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
test_cli_build "256" "fp16;bf16" 6 "-DFLASHATTN_SM90_RESCALE_BY_SUM=2" &
PY_DIMS="64;256" sm90_build_py base "" 3 400 &
PY_DIMS="256" sm90_build_py bs256 "-DFLASHATTN_SM90_RESCALE_BY_SUM=2" 3 400 &
PY_DIMS="64" sm90_build_py alt1k "-DFLASHATTN_SM90_D64_ALT_MIN_SEQLEN_MASKED=1024" 3 400 &
PY_DIMS="128" sm90_build_py base128 "" 3 400 &
PY_DIMS="128" sm90_build_py tmr "-DFLASHATTN_SM90_TILE_MASK_RANGE=1" 3 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
suites_and_racecheck '*cuda_sm90*:*Sm90*' '*ForwardTest*cuda_sm90*128x217*:*ForwardSpread*cuda_sm90*d256*' 120
grep -E "^\[  (PASSED|FAILED)|Failure" "$out/tests.txt" | head -30 >>"$out/summary.txt"
rm -f "$out/tests.txt"
sm90_ctrl_copy
sm90_ab_passes "p1 base,bs256,ctrl;p2 ctrl,bs256,base;p3 bs256,base,ctrl" "256" 512,1024,2048,4096,8192,16384 60 120
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base bs256 ctrl | tee -a "$out/summary.txt"
for pass in "p1 base,alt1k,ctrl" "p2 ctrl,alt1k,base" "p3 alt1k,base,ctrl"; do
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 60 python3 bench/sm90r_ab.py --builds "${pass#* }" --hdims 64 \
    --causal 1 --seqlens 512,1024 --rep 60 2>&1 | grep -v Warning | sed "s/^{/{\"pass\": \"${pass%% *}\", /" |
    tee -a "$out/ab64.jsonl"
done
python3 bench/integration/ab_summary.py "$out/ab64.jsonl" base alt1k ctrl | tee -a "$out/summary.txt"
sm90_ctrl_copy base128
mv "$out/ab.jsonl" "$out/ab256.jsonl"
sm90_ab_passes "p1 base128,tmr,ctrl;p2 ctrl,tmr,base128;p3 tmr,base128,ctrl" "128" 512,1024,2048,4096,8192,16384 60 120
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base128 tmr ctrl | tee -a "$out/summary.txt"
log total
