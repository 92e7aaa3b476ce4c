#!/usr/bin/env bash
# Session 54: the refitted split rule with two levels' pieces of at most kMinSplitKVBlocks rounded up to whole
# clusters (s54_rule.sh had read two K/V heads over 24000 keys 1.065 in 40 pieces where session 53's rule took
# 56), against session 53's rule (s54_rule3.patch: the whole refit, reversed): s54_rule.py's rows in two
# passes, orders swapped; the KV-cache / split-KV / workspace / cuda_sm90 suites on the new tree.
# Prediction: as s54_rule.sh on every row, and 16/2 at 24000 keys 0.98-1.01 (48 pieces against 56).
#   bash bench/integration/s54_rule3.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s54q
patch_ab_builds bench/integration/s54_rule3.patch
rows_ab s54_rule.py rule3 base new
rows_ab s54_rule.py rule4 new base
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*CudaSm90*' 200
log total
