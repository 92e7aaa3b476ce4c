#!/usr/bin/env bash
# Session 24: the first K block of a tile before its Q in the K/V multicast (cluster) instances too
# (FLASHATTN_SM90_FIRST_K_BEFORE_Q=2). Today the cluster producer publishes tile t+1, waits for Q's buffer (both
# consumers' last S of tile t), loads Q, then K(first); the K stage was free a block earlier (after S(1)), so the
# first S of t+1 waits for a K issued behind Q. At d128 non-causal 4k (cluster kernel) a tile costs ~1.2 key blocks
# of locked-clock time more than at 16k (s24_profile.sh); d256 causal 4k's consumers wait ~4% of their samples for
# K / V (s24 PC samples). Prediction: d128 non-causal 2k-4k and d256 causal 4k +0..+2%, long rows even.
# One call (H200): d128 + d256 suites with the switch (fp16 + bf16), racecheck and synccheck on the multicast
# spread cases, A/B base / fkq / control (three passes; d128 and d256, causal and not, 2k-16k).
#   bash bench/integration/s24_fkq.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s24k
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
flags="-DFLASHATTN_SM90_FIRST_K_BEFORE_Q=2"
test_cli_build "128;256" "fp16;bf16" 8 "$flags" &
PY_DIMS="128;256" sm90_build_py base "" 4 400 &
PY_DIMS="128;256" sm90_build_py fkq "$flags" 4 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
multicast_checks 150
sm90_ctrl_copy
sm90_ab_passes "p1 base,fkq,ctrl;p2 ctrl,fkq,base;p3 fkq,base,ctrl" "128 256" 2048,4096,8192,16384 60 100
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base fkq ctrl | tee -a "$out/summary.txt"
log total
