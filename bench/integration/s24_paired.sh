#!/usr/bin/env bash
# Session 24: sm90r_ab.py --paired (the builds' calls interleaved call by call, each timed alone, the per-round
# ratios' median) against its do_bench columns, on three builds of which two are identical: base, ctrl (base's
# extension installed twice) and fkq (s24_fkq.patch: FIRST_K_BEFORE_Q=2, whose do_bench A/B read 0.97-1.03 per row
# against a control spread of 0.96-1.04). Prediction: paired ctrl/base within +-0.5% on every row (do_bench: +-4%);
# fkq within +-1% of base. Two passes, d128 and d256, causal and not, 2k-16k. Ask for an H200.
#   bash bench/integration/s24_paired.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s24q
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
tree_copy "$bld/fkq-tree" bench/integration/s24_fkq.patch
PY_DIMS="128;256" sm90_build_py base "" 8 400 &
(cd "$bld/fkq-tree" && PY_DIMS="128;256" sm90_build_py fkq "-DFLASHATTN_SM90_FIRST_K_BEFORE_Q=2" 8 400) &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy
for pass in "p1 base,ctrl,fkq" "p2 base,fkq,ctrl"; do
  for d in 128 256; do
    PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 100 python3 bench/sm90r_ab.py --builds "${pass#* }" \
      --hdims $d --causal 1,0 --seqlens 2048,4096,8192,16384 --rep 60 --paired 40 2>&1 | grep -v Warning |
      sed "s/^{/{\"pass\": \"${pass%% *}\", /" >>"$out/ab.jsonl"
    log "ab ${pass%% *} d $d"
  done
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base ctrl fkq | tee -a "$out/summary.txt"
log total
