#!/usr/bin/env bash
# Session 58, first call: s57_pages.sh (the KV-cache cases in pages of 24 at d64 and of 40 at d128, alone under a
# short limit, then memcheck / racecheck, then every paged cuda_sm90 case) with s57_trace.sh's decode traces after
# them; the trace library builds in the background while the page cases run (the traces run alone).
#   bash bench/integration/s58_pages_trace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s58p
tests_and_py_build "64;128"
decode_trace_build bench/integration/s57_trace.patch "64;128" 8 &
cases='*KVCache*cuda_sm90*page24*:*KVCache*cuda_sm90*page40*'
gtest_suites "$cases" 40
sanitizer_runs "$tests" "$cases" 90 memcheck racecheck
gtest_suites '*KVCache*cuda_sm90*page*' 120
wait
decode_trace_runs 1024:48:64:0:32:8 4096:48:64:0:32:8 1024:64:128:0:32:8 4096:64:128:0:32:8 1024:16:128:0:32:8
decode_trace_briefs 1024:48:64 1024:64:128
log total
