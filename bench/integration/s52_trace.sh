#!/usr/bin/env bash
# Prepared in session 52 (not yet run): the decode trace of s52_trace2.patch (s51's events on the final tree of
# session 52, plus the producer's steps before its first tile: d setmaxnreg.dec passed, f the maps' prefetches,
# w the first work item, u its length read; list in the patch's split_kv.h DecodeTrace comment), d128 / d256 bf16
# batch 1, automatic counts: one K/V head at 4000 / 16100 / 65000 keys (d128) and 16100 (d256), GQA 32/8 at 1000.
# Question: where the ~2 us from a CTA's entry to its first K block go ('i' to 'p' read 1.2 us in session 52's
# first call, and a prefetch of the length into L1 at the entry made every decode slower: s52_prefetch.sh), and
# what the final combine and the cluster's cost on the final kernels.
#   bash bench/integration/s52_trace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s52t
decode_trace_build bench/integration/s52_trace2.patch "128;256" 16
decode_trace_runs 4000:1:128:0:8:1 16100:1:128:0:8:1 65000:1:128:0:8:1 16100:1:256:0:8:1 1000:1:128:0:32:8
log total
