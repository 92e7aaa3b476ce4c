#!/usr/bin/env bash
# Session 57: the narrow decode tile's kernel of one CTA a SM at d = 64 on 256-key blocks in two stages
# (NARROW_D64_BLOCK_N 256, the tree) against 128-key blocks in four (-DFLASHATTN_SM90_NARROW_D64_BLOCK_N=128:
# today's kernels, the d64 unit's SASS identical to the session's start). d = 64 builds only. First the d64
# KV-cache cases alone (60 s), then s57_d64blocks.py's rows in two passes with the order swapped, then the
# decode suites (d64 cases; the other dims skip) and memcheck / racecheck over the d64 KV-cache cases.
# Prediction: decodes of several tiles a CTA 0.93-0.97 of the time (d64 then as fast a byte as d128);
# one wave 0.97-1.00; small batches (pieces of 256 keys: half as many) 0.95-1.10.
#   bash bench/integration/s57_d64blocks.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s57d
tree_and_flag_base "64" "-DFLASHATTN_SM90_NARROW_D64_BLOCK_N=128"
log builds
d64_cases='Grid/KVCacheTest.*cuda_sm90*_d64_*:Random/KVCacheRandomTest.*cuda_sm90*'
timeout 60 "$tests" --gtest_filter="$d64_cases" --gtest_brief=1 >"$out/first.log" 2>&1
first=$?
log "first cases rc=$first $(grep -E '^\[  (PASSED|SKIPPED|FAILED)' "$out/first.log" | tr '\n' ' ')"
grep -E 'FAILED  \]|Failure' "$out/first.log" | cut -c1-200 | head -20 | tee -a "$out/summary.txt"
((first == 0)) || exit 1
ROWS_LIMIT=100 rows_ab s57_d64blocks.py d64 base new
ROWS_LIMIT=100 rows_ab s57_d64blocks.py d64b new base
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*Forward*cuda_sm90*' 110
sanitizer_runs "$tests" "$d64_cases" 75 memcheck racecheck
cp "$out/first.log" "$out/tests.log" "${OUT:-/tmp}/" 2>/dev/null
log total
