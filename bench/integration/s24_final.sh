#!/usr/bin/env bash
# Session 24, last call (H200): (1) the final tree (FIRST_K_BEFORE_Q now also in the masked cluster instances; every
# kernel's SASS equals the old default's or s24_fkq's verified build's): d128 + d256 sm90 suites fp16 + bf16,
# racecheck and synccheck on the multicast spread cases, float64-checked CLI runs on the masked cluster kernels;
# (2) with the interleaved timing (sm90r_ab.py --paired), three existing d256 switches that do_bench A/Bs read
# within their noise: TILE_MASK_RANGE=2 (s23: 0.994), MASK_FORM_OTHER=2 (s23: 1.000), SECTION_L2_DIVISOR_OTHER=4
# (s16: DRAM halved at causal 8k, time unchanged). Prediction: each within +-0.5%, causal rows the most.
#   bash bench/integration/s24_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s24f
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
test_cli_build "128;256" "fp16;bf16" 6 &
PY_DIMS="256" sm90_build_py base "" 3 400 &
PY_DIMS="256" sm90_build_py tmr2 "-DFLASHATTN_SM90_TILE_MASK_RANGE=2" 3 400 &
PY_DIMS="256" sm90_build_py mfo2 "-DFLASHATTN_SM90_MASK_FORM_OTHER=2" 3 400 &
PY_DIMS="256" sm90_build_py sec4 "-DFLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER=4" 3 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
multicast_checks 150
cli_runs "--head-dim 128 --causal --seqlen-q 8192 -b 1 --heads 8 --heads-kv 2" \
  "--head-dim 256 --causal --seqlen-q 4096 -b 2 --heads 8 --dtype fp16 --sink" \
  "--head-dim 256 --causal --seqlen-q 4096 --seqlen-k 4200 -b 1 --heads 8 --softcap 30 --alibi" \
  "--head-dim 128 --window 900,0 --seqlen-q 8192 -b 1 --heads 8"
cli_summary
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 120 python3 bench/sm90r_ab.py --builds base,tmr2,mfo2,sec4 \
  --hdims 256 --causal 1,0 --seqlens 1024,2048,4096,8192,16384 --rep 40 --paired 30 2>&1 | grep -v Warning |
  sed 's/^{/{"pass": "p1", /' >>"$out/ab.jsonl"
log "ab paired"
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base tmr2 mfo2 sec4 | tee -a "$out/summary.txt"
log total
