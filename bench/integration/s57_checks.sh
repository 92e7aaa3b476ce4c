#!/usr/bin/env bash
# Session 57: the tree's decode kernels as session 56 kept them (the two Q slots reverted), verified: the three
# KV-cache / forward cases never run on them on a GPU (session 56's groups of 8 and pages of 16, session 57's
# MHA in pages of 64 over 12 sequences: three items a CTA) under memcheck and racecheck, the decode GPU suites,
# pytest's interface and dispatch files.
#   bash bench/integration/s57_checks.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s57c
tests_and_py_build "64;128;256"
new_cases='*cuda_sm90*_b20_gqa64x8*:*cuda_sm90*1x1300_b20*page16*:*cuda_sm90*_b12_mha32*'
gtest_suites "$new_cases" 60
sanitizer_runs "$tests" "$new_cases" 100 memcheck racecheck
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*Forward*cuda_sm90*' 220
py_tests_on_gpu test_interface.py test_dispatch.py
cp "$out"/*.log "$out/pytest.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
