#!/usr/bin/env bash
# Session 32 (issue 6): s32_rounds.sh's probe read whole-round shapes 4.6% (d256 causal 4k, d128 non-causal 8k)
# and 2.7% (d128 non-causal 4k) above the grid shapes of the same length, cuDNN -0.4..+2.3%. This sweeps the head
# count at batch 1 (bench/rounds_probe.py --sweep), so that only the rounds change: d256 causal 4k h 31..34 (couples
# / 132 = 3.76 / 3.88 / 4 / 4.12), d128 non-causal 8k h 32..34 and 4k h 64 / 66 / 68 (tiles / 132 = 15.5 / 16 /
# 16.5), d256 non-causal 1k h 128 / 132 / 136, d256 causal 2k h 64 / 66 / 68.
# Prediction, if the partial round costs in full: TFLOP/s in proportion to rounds / ceil(rounds) (h31 0.94, h32
# 0.97, h33 1.00, h34 0.82 at d256 causal 4k); under the power cap the partial rounds lose less.
# Result (s32_sweep.jsonl): d256 causal 4k h31..34 616.5 / 647.1 / 646.0 / 572.2 TFLOP/s (the 4.12-round h34 loses
# 12%, the 3.88-round h32 nothing against whole h33); d128 non-causal 8k h32..34 677.6 / 688.4 / 673.5, 4k h64..68
# 665.0 / 674.9 / 656.8 (whole rounds +1.5..+2%, within the stints' noise); d256 non-causal 1k 645.8 / 646.8 / 621.9;
# d256 causal 2k 588.9 / 561.8 / 530.6. The b1 h32 read of causal 4k (647) against the grid shape's 624 in
# s32_rounds.sh prompted s32_layout.sh.
# One H200 call (~3 minutes).
#   bash bench/integration/s32_sweep.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s32s
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS="128;256" sm90_build_py base "" 16 300
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
PYTHONPATH=$bld/pyroot:bench PYTHONUNBUFFERED=1 timeout 300 python3 bench/rounds_probe.py --build base --rounds 3 \
  --sweep 256:1:4096:1:31/32/33/34,128:0:8192:1:32/33/34,128:0:4096:1:64/66/68,256:0:1024:1:128/132/136,256:1:2048:1:64/66/68 \
  >"$out/sweep.jsonl" 2>"$out/sweep.err"
log "sweep rc=$?"
tail -3 "$out/sweep.err" >>"$out/summary.txt"
log total
