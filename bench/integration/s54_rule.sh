#!/usr/bin/env bash
# Session 54: split_kv_plan.h's refitted choice of form and count for the narrow tile's cluster combine
# (s54_rule.patch: fixed costs in bytes of key blocks, two levels up to 64 CTAs; host only, the kernels are
# unchanged) against session 53's rule (the patch reversed): s54_rule.py's rows in two passes, orders swapped;
# then every decode check on the new tree.
# Prediction (from s54_counts.sh's requested counts): one K/V head of d128 0.90-0.95 at 6000-16100 keys,
# 0.95-0.98 at 3000-4000 and 32000; d64 at 16100 ~0.94; two K/V heads and the controls 0.98-1.02; d256 8/1 at
# 4000-8000 (64 pieces against 16-56) not measured before: 0.9-1.05.
#   bash bench/integration/s54_rule.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s54r
patch_ab_builds bench/integration/s54_rule.patch
rows_ab s54_rule.py rule base new
rows_ab s54_rule.py rule2 new base
decode_change_checks
log total
