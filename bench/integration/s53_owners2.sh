#!/usr/bin/env bash
# Session 53 (issue 6): s53_owners.sh's change in its kept form against the same base (s53_owners2.patch
# reversed): rows spread over the cluster only where it has a CTA per row (else the first CTA owns them all,
# storing them into O directly), no division in the deal, O's address and strides in SplitKV. s53_owners.sh
# read one K/V head at 4000 / 16100 keys 0.94 / 0.90, d256 16/8 0.97, and 1.01-1.04 where clusters of 2-3 held
# 4 rows (GQA 32/8 batch 4 / 8, d64 batch 4).
# Prediction: the 8-row rows as in s53_owners.sh, the 4-row rows on clusters of 2-3 back to 0.99-1.01.
#   bash bench/integration/s53_owners2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s53p
patch_ab_builds bench/integration/s53_owners2.patch
rows_ab s52_prefetch.py owners3 base new
rows_ab s52_prefetch.py owners4 new base
sm90_sass_counts "$bld/full" | grep -E "Li1ELi0ELi1ELb0ELb1" | tee -a "$out/summary.txt"
decode_change_checks
log total
