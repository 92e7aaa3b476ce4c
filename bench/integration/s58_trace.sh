#!/usr/bin/env bash
# Session 58: s57_trace.sh's decode traces with s58_trace.patch, which also gives KV-cache launches without
# pieces (the many-tile decodes: d64 over 1024 keys at 48 sequences, 0.92x of cuDNN) a trace area after the
# tile counter; s57's patch had one for split launches only ("no trace area" in s58_defer_rest.sh's call).
#   bash bench/integration/s58_trace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s58t
decode_trace_build bench/integration/s58_trace.patch "64;128" 16
decode_trace_runs 1024:48:64:0:32:8 4096:48:64:0:32:8 1024:64:128:0:32:8 4096:64:128:0:32:8 1024:16:128:0:32:8
decode_trace_briefs 1024:48:64 4096:48:64 1024:64:128 4096:64:128 1024:16:128
log total
