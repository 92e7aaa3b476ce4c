#!/usr/bin/env bash
# Session 51 (issue 6): clusters of up to 16 pieces on the narrow decode tile (forward_config.h
# kMaxClusterPieces 16, non-portable above 8; slots sized by the launch's rows: ForwardConfig cluster_pieces_fit)
# and the count rule that weighs the cluster's pieces against the counter's (split_kv_plan.h kClusterCountShare),
# against the same tree built with CLUSTER_COMBINE=0. One call: the test binary and extension (d 64 / 128 / 256,
# both dtypes) and the base extension; the decode kernels' SASS counts; the KV-cache, split-KV, workspace,
# cuda_sm90 forward / varlen suites; memcheck / racecheck on every KV-cache case of cuda_sm90 (grid and drawn),
# synccheck on the cluster cases; bench/integration/s51_cluster16.py's rows (base against new).
# Prediction: 8 tiles at 16100 keys in 16 cluster pieces ~22 us against 23.3 in 8 (session 50) and 24.3 in the
# counter's 16 (paged64 ~22.5 against 25.0); d256 16/8 3999 keys ~11.3 in 15 against 12.3 in 8; one K/V head
# (1 tile) at 16100 keys: session 50's 8 cluster pieces well behind the counter's 31 (~1.5-2x: 8 SMs stream),
# 15 cluster pieces within ~10% of the counter's; the 1000-key rows unchanged; suites pass, sanitizers clean.
#   bash bench/integration/s51_cluster16.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s51a
tree_and_flag_base "64;128;256" "-DFLASHATTN_SM90_CLUSTER_COMBINE=0"
sm90_sass_counts "$bld/full" | grep -E "Li1ELi0ELi1ELb0ELb1E" | tee -a "$out/summary.txt"
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 200 python3 s51_cluster16.py base new) 2>&1 |
  grep -v Warning >"$out/cluster16.jsonl"
log "cluster16 A/B rc=$?"
ab_summary "$out/cluster16.jsonl"
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*CudaSm90*:*Varlen*cuda_sm90*:*Forward*cuda_sm90*' 200
clusters='Grid/KVCacheTest.*cuda_sm90_20[789]_*:Grid/KVCacheTest.*cuda_sm90_21[012]_*'
sanitizer_runs "$tests" "$clusters" 100 synccheck
sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90*:Random/KVCacheRandomTest.*cuda_sm90*' 150 memcheck racecheck
log total
