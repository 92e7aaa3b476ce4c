#!/usr/bin/env bash
# Session 52 (issue 6): the narrow tile's combines over float4 units in registers (decode_consumer.h sum_pieces)
# against the tree before (s52_combine.patch reversed). One call: the test binary and extension (d 64 / 128 /
# 256, both dtypes) and the base extension; bench/integration/s52_combine.py's rows; the KV-cache, split-KV,
# workspace, cuda_sm90 forward / varlen suites; memcheck / racecheck on every KV-cache case of cuda_sm90,
# synccheck on the cluster cases; pytest's interface and dispatch files on the GPU; then the decode trace of
# s52_trace.patch (s51's, ported: h / c the final combine's entry / end) at 16100 and 65000 keys over one K/V
# head.
# Prediction (s52_first.sh's trace: the final combine of 7 records took 2.9 us, of 15 records 4.8 us, the
# cluster's combine 1.2 us): one K/V head d128 16100 keys ~11 us against 13.1 (0.85), 65000 ~14 against 17.8
# (0.8), one cluster of 8 at 4000 keys ~0.95; the 20-piece counter at 8 rows ~0.8; d256 8-row rows 0.8-0.9;
# GQA 32/8 rows unchanged (1.00 +- 0.02); suites pass, sanitizers clean.
#   bash bench/integration/s52_combine.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s52b
tree_copy "$bld/base-tree" bench/integration/s52_combine.patch -R
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
