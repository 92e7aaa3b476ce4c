#!/usr/bin/env bash
# Prepared in session 55 (not yet run): where a decode of 1024 keys over 17 sequences (136 tiles: 132 whole,
# then the last 4 tiles' 10 pieces each, SPLIT_KV_TAIL) spends the ~6 us it takes beyond 16 sequences' call
# (26.4 against 20.4 us; cuDNN's 22.6 against 21.0), beside 16 sequences (one wave), 4096 keys over 17, and
# 1024 keys over 32 (124 tail tiles, unsplit: 0.96x of cuDNN). s53_trace.patch rebased onto session 55's tree
# as s56_trace.patch (the per-CTA event lists of split_kv.h DecodeTrace; the cluster path's events where the
# session 53 owners' code left room), read by bench/decode_trace.py. The patch is applied to a copy of the
# tree only (decode_trace_build), never committed. Checked locally in session 55: the patch applies to the
# tree, the d128 bf16 unit and bench/decode_trace_driver.cu compile.
#   bash bench/integration/s56_trace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s56t
decode_trace_build bench/integration/s56_trace.patch "128" 16
decode_trace_runs 1024:16:128:0:32:8 1024:17:128:0:32:8 4096:17:128:0:32:8 1024:32:128:0:32:8
log total
