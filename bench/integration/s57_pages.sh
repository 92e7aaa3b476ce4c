#!/usr/bin/env bash
# Prepared in session 57 (not yet run): the KV-cache cases in pages of 24 (d64: 32 boxes of 8 rows a 256-key
# block, every lane of the producer warp; the box mask's 32-box case, fixed after session 57's device time)
# and of 40 (d128: 16 boxes), first alone under a short limit, then under memcheck and racecheck; the other
# paged cuda_sm90 cases beside.
#   bash bench/integration/s57_pages.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s57p
tests_and_py_build "64;128"
cases='*KVCache*cuda_sm90*page24*:*KVCache*cuda_sm90*page40*'
gtest_suites "$cases" 40
sanitizer_runs "$tests" "$cases" 90 memcheck racecheck
gtest_suites '*KVCache*cuda_sm90*page*' 120
log total
