#!/usr/bin/env bash
# Session 64, call 3: STAGED_KEY_STORE (d64 / d128 consumers: dK / dV through shared memory and TMA stores
# instead of 4-byte stores from registers, which call 2's trace read at 6.8 us of a d128 tile's ~74 at 2k
# tokens, persistent, and 4.7 us causal; 2.2-2.3 us at d64). Tests on the tree (the switch on); the base
# package is the tree with it off. Predicted: d128 0.80-0.90x the time at 512, 0.92-0.96x at 2k, ~0.99x at 16k;
# d64 less (0.90-0.97x at 512-2k). Then the trace on the patched tree (s64_bwd_trace2.patch), the backward
# suites, synccheck and racecheck.
#   bash bench/integration/s64_staged_store.sh
# (Run in session 64: d128 0.891 / 0.946 / 0.969 / 0.963 / 0.982x the time causal at 512 / 1k / 2k / 4k / 16k,
# 0.930 / 0.970 / 0.991 / 1.000 / 0.991 non-causal; d64 causal 0.924 / 0.935 / 0.977 / 1.004 / 0.984, non-causal
# 0.99-1.005. The trace: d128 2k persistent dK / dV stores 6.75 -> 1.63 us a tile, the K / V wait now exposed
# (1.7 us median at 512). Suites: 107 passed, Api.Sm90BackwardRouting failed (a build without d256: fixed in the
# test); synccheck and racecheck clean over 34 cases. Kept: d07891f.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s64s
backward_switch_call staged_vs_base bench/integration/s64_bwd_trace2.patch "" \
  "-DFLASHATTN_SM90_BWD_STAGED_KEY_STORE=0"
log total
