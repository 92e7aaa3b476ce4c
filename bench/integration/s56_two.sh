#!/usr/bin/env bash
# Session 56: the narrow decode kernel of two CTAs a SM (TWO_CTAS_PER_SM) against the tree built with
# -DFLASHATTN_SM90_TWO_CTAS_PER_SM=0: the tree's tests and extension beside the switch-off extension; the decode
# GPU suites (the new cases of 136-1280 tiles among them); the cases that run the new kernel under memcheck,
# racecheck and synccheck; s56_two.py's rows in two passes (orders swapped, SDPA beside); s55_ragged.py's
# rows (sequences of different lengths) in two passes; pytest.
# Prediction: GQA 32/8 d128 at batch 17-24 over 1024 keys 0.80-0.90 of the time (the ~5 us tail of a ~26 us
# call), 0.90-1.0 over 4096-16384 and at batch 32-64; d64 and MHA alike; controls 1.00.
#   bash bench/integration/s56_two.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s56two
tree_and_flag_base "64;128;256" "-DFLASHATTN_SM90_TWO_CTAS_PER_SM=0"
log builds
ROWS_LIMIT=200 rows_ab s56_two.py two base new
ROWS_LIMIT=200 rows_ab s56_two.py two2 new base
ROWS_LIMIT=100 rows_ab s55_ragged.py ragged base new
ROWS_LIMIT=100 rows_ab s55_ragged.py ragged2 new base
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*Forward*cuda_sm90*' 200
two_cases='Grid/KVCacheTest.*cuda_sm90*_b17_*:Grid/KVCacheTest.*cuda_sm90*_b20_*'
two_cases+=':Grid/KVCacheTest.*cuda_sm90*_b25_*:Grid/KVCacheTest.*cuda_sm90*_b36_*'
two_cases+=':Grid/KVCacheTest.*cuda_sm90*_b34_*:Grid/ForwardTest.*cuda_sm90*_b20_*'
two_cases+=':Grid/ForwardTest.*cuda_sm90*_b17_*:Grid/ForwardTest.*cuda_sm90*_b36_*:Grid/ForwardTest.*cuda_sm90*_b40_*'
sanitizer_runs "$tests" "$two_cases" 120 memcheck racecheck synccheck
py_tests_on_gpu test_interface.py test_dispatch.py
log total
