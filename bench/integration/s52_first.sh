#!/usr/bin/env bash
# Session 52's first call: session 51's two prepared scripts in one call (their builds side by side, 8 jobs each).
# s51_autocheck.py: the split-count rule's automatic choices over one and two K/V heads against the requested counts
# it weighed, SDPA beside. Prediction (s51_last.sh's sweep): 16100 keys automatic (two levels, 56 pieces) ~13.1 us
# against 15.1 in one cluster of 15; 4000 keys automatic (one cluster of 8) ~10.1 against 11.2 in 32; each
# automatic row within ~3% of the fastest requested count beside it.
# s51_trace.patch's decode trace (events in that patch's split_kv.h DecodeTrace comment; bench/decode_trace.py),
# d128 bf16 batch 1: one K/V head at 16100 (automatic, and one cluster of 15), 32000 and 65000 keys, two K/V heads
# (16/2) at 16100, GQA 32/8 at 1000. Question: where the time goes after the pieces' last blocks, where cuDNN is
# 1.2-1.4x faster (16-32k keys over one K/V head, 1.15x over two).
#   bash bench/integration/s52_first.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s52a
PY_DIMS="64;128" sm90_build_py new "" 8 300 &
decode_trace_build bench/integration/s51_trace.patch "128" 8 &
wait
rows_ab s51_autocheck.py autocheck new
decode_trace_runs 16100:1:128:0:8:1 16100:1:128:15:8:1 32000:1:128:0:8:1 65000:1:128:0:8:1 16100:1:128:0:16:2 \
  1000:1:128:0:32:8
log total
