#!/usr/bin/env bash
# Session 52 (issue 6): sum_pieces' second form (branch-free, ex2.approx weights, half rounds where they hold
# every piece, 32-bit offsets) against session 51's tree (s52_combine2.patch reversed: both forms' change), the
# same call as s52_combine.sh (rows, suites, sanitizers, pytest, the trace of s52_trace.patch).
# Prediction (s52_combine.sh read the first form at 0.73-0.96 on 8-row tiles, 1.02-1.06 on one-unit rows; its
# trace: the final combine 2.2 us for 7 records, 3.2 for 15, the cluster's 1.34 us, instruction-bound): 8-row
# tiles 0.05-0.1 below the first form's ratios, the one-unit rows (GQA 32/8, d64 8/1, d256 16/8, one cluster of
# 8 at 4000 keys) at or below 1.00; the trace's combines ~1.5 / 2.2 us and ~0.9 us.
#   bash bench/integration/s52_combine.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s52c
tree_copy "$bld/base-tree" bench/integration/s52_combine2.patch -R
(cd "$bld/base-tree" && PY_DIMS="64;128;256" sm90_build_py base "" 5 300) &
tests_and_py_build "64;128;256"
wait
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 200 python3 s52_combine.py base new) 2>&1 |
  grep -v Warning >"$out/combine.jsonl"
log "combine A/B rc=$?"
ab_summary "$out/combine.jsonl"
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*CudaSm90*:*Varlen*cuda_sm90*:*Forward*cuda_sm90*' 220
clusters='Grid/KVCacheTest.*cuda_sm90_*splits24*:Grid/KVCacheTest.*cuda_sm90_*1x40000*'
clusters+=':Grid/KVCacheTest.*cuda_sm90_*splits20*:Grid/KVCacheTest.*cuda_sm90_*1x2500_b1_mqa8_d256*'
clusters+=':Grid/KVCacheTest.*cuda_sm90_*1x4000_*:Grid/KVCacheTest.*cuda_sm90_*gqa12x2_d256*'
sanitizer_runs "$tests" "$clusters" 100 synccheck
sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90*:Random/KVCacheRandomTest.*cuda_sm90*' 150 memcheck racecheck
py_tests_on_gpu test_interface.py test_dispatch.py
decode_trace_build bench/integration/s52_trace.patch "128" 16
for run in 16100:1:128:0:8:1 65000:1:128:0:8:1; do
  IFS=: read -r keys batch d splits hq hk <<<"$run"
  {
    echo "== d$d keys $keys batch $batch splits $splits heads $hq/$hk"
    timeout 60 "$bld/trace" "$keys" "$batch" kvcache "$bld/trace.bin" "$d" "$splits" "$hq" "$hk"
    timeout 60 python3 "$bld/trace-tree/bench/decode_trace.py" "$bld/trace.bin" --ctas 2
  } >>"$out/summary.txt" 2>&1
  log "run $run"
done
log total
