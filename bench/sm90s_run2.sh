#!/usr/bin/env bash
# Run 2 of helper sm90s (session 6): bench/sm90s_run.sh with these builds (all bf16, d 64/128/256):
#   base = every session-6 switch 0 (main's kernels), ctrl = base's extension again (noise floor);
#   new  = EARLY_DECODE + FAST_DIVISION + STMATRIX_O + FAST_FINALIZE (run 1's "new");
#   var  = new + DEFERRED_O_STORE;  var2 = new + FIRST_K_BEFORE_Q;  var3 = new + both.
# Tests: var3's flags (every new code path; d 64/128/192/256, fp16 + bf16) and new's (d 64/128/256);
# racecheck + synccheck on both. ncu: new and var3 at d128 s 512. The A/B covers s 512 .. 16k.
#   cd .device-carry/sm90s && timeout 290 bash bench/sm90s_run2.sh
# Ran on the tree of commit 76eb84a; DEFERRED_O_STORE exists only there (measured no gain, removed).
s="-DFLASHATTN_SM90_EARLY_DECODE=1 -DFLASHATTN_SM90_FAST_DIVISION=1 -DFLASHATTN_SM90_STMATRIX_O=1 -DFLASHATTN_SM90_FAST_FINALIZE=1"
z="-DFLASHATTN_SM90_EARLY_DECODE=0 -DFLASHATTN_SM90_FAST_DIVISION=0 -DFLASHATTN_SM90_STMATRIX_O=0 -DFLASHATTN_SM90_FAST_FINALIZE=0"
z="$z -DFLASHATTN_SM90_DEFERRED_O_STORE=0 -DFLASHATTN_SM90_FIRST_K_BEFORE_Q=0"
d="-DFLASHATTN_SM90_DEFERRED_O_STORE=1"
k="-DFLASHATTN_SM90_FIRST_K_BEFORE_Q=1"
BASE_FLAGS="$z" NEW_FLAGS="$s" VAR_FLAGS="$s $d" VAR2_FLAGS="$s $k" VAR3_FLAGS="$s $d $k" \
  TEST_FLAGS="$s $d $k" TEST2_FLAGS="$s" NCU_CUDNN=0 NCU_BUILDS="new var3" PY_JOBS=3 TEST_JOBS=3 \
  bash bench/sm90s_run.sh
