#!/usr/bin/env bash
# Session 53 (issue 6): slots of one row where the rows are spread (decode_consumer.h slot_rows; ForwardConfig
# cluster_slots, split_kv_plan.h ClusterSlots): d256 tiles of 8 rows, whose whole records a CTA's slots hold 3
# of, take the cluster combine from 8 pieces up (one K/V head at 16100 keys: two levels of 7 clusters of 8,
# where they took 32 pieces through the arrival counter). Against the tree before (s53_slots.patch reversed);
# s52_combine.py's rows, one pass; the KV-cache / split-KV / workspace suites and the sanitizers on the cluster
# cases only (the device time left: ~6 minutes).
# As run: the base tree already carried the kernel change (a docs commit, `git commit -a`, had swept the source
# in before this call; s53_slots.patch held only the test cases), so both builds had the same kernels and the
# A/B reads as a control (0.946-1.029). Against s53_final.sh's reading of the tree before, an hour earlier on
# the same GPU type, the d256 8-row rows moved from 14.16 / 19.27 us to 9.38 / 11.73 (cuDNN 12.84 / 16.32 there,
# 12.67 / 16.42 here): a cross-call comparison, not an A/B.
# Prediction: d256 8/1 at 16100 keys 0.80-0.90 (19.3 us; cuDNN 16.3), at 4000 keys 0.90-0.97 (one cluster of
# 8 against 24 pieces through the counter), d256 6-row and 8/2 rows 1.00, every other row 1.00 (their counts
# and slots change only in layout).
#   bash bench/integration/s53_slots.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s53l
patch_ab_builds bench/integration/s53_slots.patch
rows_ab s52_combine.py slots base new
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*' 110
clusters='Grid/KVCacheTest.*cuda_sm90_*d256*:Grid/KVCacheTest.*cuda_sm90_*1x4000_*:Grid/KVCacheTest.*cuda_sm90_*1x40000*'
clusters+=':Grid/KVCacheTest.*cuda_sm90_*splits24*:Grid/KVCacheTest.*cuda_sm90_*2x1200*'
sanitizer_runs "$tests" "$clusters" 45 synccheck memcheck racecheck
log total
