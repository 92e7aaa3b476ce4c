#!/usr/bin/env bash
# Session 53 (issue 6): the cluster combine's rows summed by their owners (decode_consumer.h: row j of a tile by
# the cluster's CTA of rank j % cluster_size, each storing its rows into O directly; two levels: each owner's
# rows complete on a counter of their own and its last arriver sums them through L2) against the tree before
# it (s53_owners.patch reversed: the first CTA sums every row, the last arriving cluster's first CTA every
# record). s53_relaxed.sh's trace: the cluster's combine 1.1 us, the final combine 1.4 us for 7 records and
# 3.7 us for 15 (s52_trace.sh), each one warpgroup's chain over every row.
# Prediction: 8-row rows over one cluster (one K/V head at 4000 keys, GQA 32/8 at 1000 keys) 0.93-0.97, two
# levels (16100 / 65000 keys) 0.85-0.92, one-row tiles (32/32) and rows without clusters 1.00.
#   bash bench/integration/s53_owners.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s53o
patch_ab_builds bench/integration/s53_owners.patch
rows_ab s52_prefetch.py owners base new
rows_ab s52_prefetch.py owners2 new base
sm90_sass_counts "$bld/full" | grep -E "Li1ELi0ELi1ELb0ELb1" | tee -a "$out/summary.txt"
decode_change_checks
log total
