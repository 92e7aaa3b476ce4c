#!/usr/bin/env bash
# Session 53 (issue 6): the cluster-combine decode's entry arrival relaxed (forward_kernel.h: barrier.cluster.arrive
# without .release, whose MEMBAR.ALL.GPU held the producer before its first load: s52_trace.sh read 0.5 us from
# the barriers' __syncthreads to setmaxnreg.dec on the cluster launches against 0.1 without a cluster) against the
# tree before it (s53_relaxed.patch reversed), and session 52's entry prefetch of the first length
# (s52_prefetch.patch) on top of it as a third build "pf" (its loss there may have been the release's MEMBAR
# waiting for the prefetch). Two passes of s52_prefetch.py's rows (three builds, orders swapped), a trace with
# finer producer events between its tile handoff and the first K load (s53_trace.patch), the decode checks.
# Prediction: the cluster rows (one K/V head 4000-65000 keys, GQA 32/8 at 1000) 0.96-0.98 of base, the rest
# 1.00; pf below new on those rows if the MEMBAR explained session 52's loss.
#   bash bench/integration/s53_relaxed.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s53r
tree_copy "$bld/base-tree" bench/integration/s53_relaxed.patch -R
tree_copy "$bld/pf-tree" bench/integration/s52_prefetch.patch
(cd "$bld/base-tree" && PY_DIMS="64;128;256" sm90_build_py base "" 5 300) &
(cd "$bld/pf-tree" && PY_DIMS="64;128;256" sm90_build_py pf "" 5 300) &
tests_and_py_build "64;128;256"
wait
rows_ab s52_prefetch.py relaxed base new pf
rows_ab s52_prefetch.py relaxed2 pf new base
decode_trace_build bench/integration/s53_trace.patch "128;256" 16
decode_trace_runs 4000:1:128:0:8:1 16100:1:128:0:8:1 1000:1:128:0:32:8
decode_change_checks
log total
