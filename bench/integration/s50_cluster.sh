#!/usr/bin/env bash
# Session 50 (issue 6): a split tile's pieces as one thread-block cluster on the narrow decode tile
# (forward_config.h CLUSTER_COMBINE; decode_consumer.h send_piece_record / combine_cluster_pieces), against the
# same tree built with CLUSTER_COMBINE=0 (every split through the arrival counter, as at 855fe0e). One call: the
# test binary and extension (d 64 / 96 / 128 / 256, both dtypes) and the base extension; the SASS counts of the
# decode kernels; the KV-cache, split-KV, workspace, cuda_sm90 forward / varlen suites; memcheck / racecheck on
# every KV-cache case of cuda_sm90 (grid and drawn), synccheck on the three new cluster cases;
# bench/integration/s50_cluster.py's rows (base against new, SDPA beside).
# Prediction (s48_trace.sh: ~1 L2 round trip for the atomic, ~1 for the records' reload, ~2.7 us from the last
# arrival to the store at 1000 keys batch 1): -0.8 to -1.5 us on split rows at 1000 keys (0.85-0.92 of base),
# less at 4k-16k; batch 4 then faster with 4 pieces than with 2; unsplit rows 1.00; suites pass, sanitizers clean.
#   bash bench/integration/s50_cluster.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin "${1:-s50a}"  # s50_cluster2.sh: s50b
tree_and_flag_base "64;96;128;256" "-DFLASHATTN_SM90_CLUSTER_COMBINE=0"
sm90_sass_counts "$bld/full" | grep -E "Li1ELi0ELi1ELb0ELb1E" | tee -a "$out/summary.txt"
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*CudaSm90*:*Varlen*cuda_sm90*:*Forward*cuda_sm90*' 250
clusters='Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_1x1500_b2_*'
clusters+=':Grid/KVCacheTest.*cuda_sm90_*_1x2000_b1_*'
sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90*:Random/KVCacheRandomTest.*cuda_sm90*' 150 memcheck racecheck
sanitizer_runs "$tests" "$clusters" 100 synccheck
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 240 python3 s50_cluster.py base new) 2>&1 |
  grep -v Warning >"$out/cluster.jsonl"
log "cluster A/B rc=$?"
ab_summary "$out/cluster.jsonl"
if [[ -n ${S50_ROWS:-} ]]; then
  (cd bench/integration && S50_ROWS=$S50_ROWS PYTHONPATH=$bld/pyroot timeout 200 python3 s50_cluster.py base new) 2>&1 |
    grep -v Warning >"$out/sweep.jsonl"
  log "sweep rc=$?"
  ab_summary "$out/sweep.jsonl"
fi
log total
