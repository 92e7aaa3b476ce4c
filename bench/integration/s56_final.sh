#!/usr/bin/env bash
# Session 56, the rule as kept: the kernel of two CTAs a SM only for sms < tiles <= 2 sms over at most
# TWO_CTAS_MAX_SEQLEN (4096) keys with the rule's split count (s56_two.sh had launched it for every decode of
# more tiles than SMs). The tree's tests and extension beside the switch-off extension; s56_two.py's rows and
# s55_ragged.py's, one pass each way (prediction: the wins of s56_two.sh where the rule takes the kernel,
# 1.00 elsewhere); the decode GPU suites (the ForwardWorkspace check that s56_two.sh failed, rewritten);
# pytest. The kernels are s56_two.sh's (host-side rule only), whose new cases ran clean under the sanitizers.
#   bash bench/integration/s56_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s56f
tree_and_flag_base "64;128;256" "-DFLASHATTN_SM90_TWO_CTAS_PER_SM=0"
log builds
ROWS_LIMIT=200 rows_ab s56_two.py two base new
ROWS_LIMIT=200 rows_ab s56_two.py two2 new base
ROWS_LIMIT=100 rows_ab s55_ragged.py ragged base new
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*Forward*cuda_sm90*' 220
py_tests_on_gpu test_interface.py test_dispatch.py
log total
