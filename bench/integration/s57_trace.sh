#!/usr/bin/env bash
# Prepared in session 57 (not yet run): where decodes whose CTAs run several short tiles lose against the long
# caches' stream rate (d64 over 1024 keys at 48 sequences: 0.92x of cuDNN; d128 over 1024 keys at 64 sequences
# 3.98 TB/s against 4.4 over 4096). Session 57's Q slots showed it is not the ring running dry at a CTA's tile
# boundary; the candidates are the launch's ramp (the first loads' latency, every CTA at once) and the last
# round (CTAs that end a tile early idle). s56_trace.patch rebased onto session 57's tree as s57_trace.patch
# (one conflict: the grid's cap now over `slots`), the per-CTA event lists read by bench/decode_trace.py, whole
# call (--brief: span and event medians) and two CTAs' timelines. One wave (d128 16 sequences) beside as the
# reference. Checked locally: the patch applies, the d64 / d128 bf16 library and bench/decode_trace_driver.cu
# build. (A CTA's list holds 63 events: d128's 4 tiles of 8 blocks overflow it; the first tiles are what the
# ramp needs.)
#   bash bench/integration/s57_trace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s57t
decode_trace_build bench/integration/s57_trace.patch "64;128" 16
decode_trace_runs 1024:48:64:0:32:8 4096:48:64:0:32:8 1024:64:128:0:32:8 4096:64:128:0:32:8 1024:16:128:0:32:8
decode_trace_briefs 1024:48:64 1024:64:128
log total
