#!/usr/bin/env bash
# Run 2 of helper sm90q (session 6): bench/sm90q_run.sh with these builds (bf16, d 64/128/256):
#   base = defaults; ctrl = base's extension again (noise floor); new = SPLIT_Q 1 (run 1's, which lost the
#   uniform datapath); var = SPLIT_Q 2 (the consumer's Q barrier addresses opaque, computed once);
#   var2 = SPLIT_Q 1 + STATIC_CONSUMER 1 (the consumer index a compile-time constant); var3 = STATIC_CONSUMER 1
#   alone. Test builds: var2's flags (gpu) and var3's (gpu2), suites + racecheck + synccheck on each.
#   cd .device-carry/sm90q && DEADLINE=222 timeout 232 bash bench/sm90q_run2.sh
s1="-DFLASHATTN_SM90_SPLIT_Q=1"
st="-DFLASHATTN_SM90_STATIC_CONSUMER=1"
PY_BUILDS="base=-DFLASHATTN_SM90_SPLIT_Q=0;new=$s1;var=-DFLASHATTN_SM90_SPLIT_Q=2;var2=$s1 $st;var3=$st" \
  TEST_FLAGS="$s1 $st" TEST2_FLAGS="$st" PY_JOBS=3 TEST_JOBS=4 AB_TIMEOUT=80 bash bench/sm90q_run.sh
