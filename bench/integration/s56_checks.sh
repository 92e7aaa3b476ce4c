#!/usr/bin/env bash
# Session 56, first call: the forward tests added after session 55's device time was spent (two decode cases of
# more tiles than SMs on the static schedule, one with a sink; the tail's workspace records), inside every decode
# check (the GPU suites of KV cache / split-KV / workspace / forward / varlen on cuda_sm90, the sanitizers on the
# cluster and KV-cache cases, pytest), then s56_trace.sh's decode traces (1024 keys over 16 / 17 / 32 sequences,
# 4096 over 17; d128 GQA 32/8).
#   bash bench/integration/s56_checks.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s56c
tests_and_py_build "64;128;256"
decode_change_checks
decode_trace_build bench/integration/s56_trace.patch "128" 16
decode_trace_runs 1024:16:128:0:32:8 1024:17:128:0:32:8 4096:17:128:0:32:8 1024:32:128:0:32:8
log total
