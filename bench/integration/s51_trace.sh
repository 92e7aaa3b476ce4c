#!/usr/bin/env bash
# Prepared in session 51 (not yet run): session 48's decode trace ported to this tree (s51_trace.patch: the events
# of s48_trace.patch, plus the cluster combine's: T / t a piece's send_piece_record start / end, W the first
# CTA's cluster_full wait done, G combine_cluster_pieces done, two levels r the cluster record's arrival and F the
# final combine's end; the list in the patch's split_kv.h DecodeTrace comment; bench/decode_trace.py), d128 bf16
# KV-cache decode steps at batch 1 with the automatic split count: one K/V head (GQA 8/1) at 16100 and 65000 keys
# (split_kv_plan.h's counts: two levels, 56 and 120 pieces in clusters of 8; the launch lowers them where the
# clusters do not all fit) and GQA 32/8 at 1000 keys (one cluster of 8 one-block pieces a tile). The driver's
# KV_HEADS argument (its 8th) is new in s51_trace.patch.
# Question: where the two levels' time goes after the pieces' last blocks (send, cluster_full, the cluster's
# combine and record, the arrival, the final combine through L2) against one cluster's.
#   bash bench/integration/s51_trace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s51t
decode_trace_build bench/integration/s51_trace.patch "128" 16
decode_trace_runs 16100:1:128:0:8:1 65000:1:128:0:8:1 1000:1:128:0:32:8
log total
