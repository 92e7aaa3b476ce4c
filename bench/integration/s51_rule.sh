#!/usr/bin/env bash
# Session 51 (issue 6), after final51.sh: a count above the portable cluster size only where it shortens every
# piece by kMinSplitKVBlocks blocks (split_kv_plan.h cluster_count_worth, in the rule and after the launch's
# bisection; host code only: the d64 / d128 / d256 units' SASS is final51.sh's). s51_final.py's rows against the
# tree before session 51 (s51_rule.patch reversed), then the KV-cache, split-KV and workspace suites of cuda_sm90.
# Prediction: d256 16/8 3999 keys back to base (8 pieces; final51.sh 1.089), d128 32/8 16100 dense 1.00
# (final51.sh 1.012, 9 pieces), paged64 32/8 16100 back to 1.00 (final51.sh 0.947 in 9: the rule gives that
# up), the one-K/V-head rows as final51.sh (0.46-0.85), d256 32/8 3999 0.83; suites pass.
#   bash bench/integration/s51_rule.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s51c
tree_copy "$bld/base-tree" bench/integration/s51_rule.patch -R
(cd "$bld/base-tree" && PY_DIMS="64;128;256" sm90_build_py base "" 5 300) &
tests_and_py_build "64;128;256"
wait
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 150 python3 s51_final.py base new) 2>&1 |
  grep -v Warning >"$out/rule.jsonl"
log "rule A/B rc=$?"
ab_summary "$out/rule.jsonl"
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*' 200
log total
