#!/usr/bin/env bash
# Session 52 (issue 6): sum_pieces' second form (branch-free, ex2.approx weights, half rounds where they hold
# every piece, 32-bit offsets) against session 51's tree (s52_combine2.patch reversed: both forms' change), the
# same call as s52_combine.sh (rows, suites, sanitizers, pytest, the trace of s52_trace.patch).
# Prediction (s52_combine.sh read the first form at 0.73-0.96 on 8-row tiles, 1.02-1.06 on one-unit rows; its
# trace: the final combine 2.2 us for 7 records, 3.2 for 15, the cluster's 1.34 us, instruction-bound): 8-row
# tiles 0.05-0.1 below the first form's ratios, the one-unit rows (GQA 32/8, d64 8/1, d256 16/8, one cluster of
# 8 at 4000 keys) at or below 1.00; the trace's combines ~1.5 / 2.2 us and ~0.9 us.
#   bash bench/integration/s52_combine2.sh    (s52_combine.sh with s52_combine2.patch)
set -uo pipefail
exec bash bench/integration/s52_combine.sh bench/integration/s52_combine2.patch
