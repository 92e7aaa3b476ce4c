#!/usr/bin/env bash
# Session 52 (issue 6): the narrow tile's combines over float4 units in registers (decode_consumer.h sum_pieces)
# against the tree before (s52_combine.patch reversed). One call: the test binary and extension (d 64 / 128 /
# 256, both dtypes) and the base extension; bench/integration/s52_combine.py's rows; the KV-cache, split-KV,
# workspace, cuda_sm90 forward / varlen suites; memcheck / racecheck on every KV-cache case of cuda_sm90,
# synccheck on the cluster cases; pytest's interface and dispatch files on the GPU; then the decode trace of
# s52_trace.patch (s51's, ported: h / c the final combine's entry / end) at 16100 and 65000 keys over one K/V
# head (s52_trace.patch applies to the trees of this call and of s52_combine2.sh; the final tree takes
# s52_trace2.patch: s52_trace.sh).
# Prediction (s52_first.sh's trace: the final combine of 7 records took 2.9 us, of 15 records 4.8 us, the
# cluster's combine 1.2 us): one K/V head d128 16100 keys ~11 us against 13.1 (0.85), 65000 ~14 against 17.8
# (0.8), one cluster of 8 at 4000 keys ~0.95; the 20-piece counter at 8 rows ~0.8; d256 8-row rows 0.8-0.9;
# GQA 32/8 rows unchanged (1.00 +- 0.02); suites pass, sanitizers clean.
#   bash bench/integration/s52_combine.sh [PATCH]     (PATCH: the base's reversed patch, default s52_combine.patch)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s52b
patch_ab_builds "${1:-bench/integration/s52_combine.patch}"
rows_ab s52_combine.py combine
decode_change_checks
decode_trace_build bench/integration/s52_trace.patch "128" 16
decode_trace_runs 16100:1:128:0:8:1 65000:1:128:0:8:1
log total
