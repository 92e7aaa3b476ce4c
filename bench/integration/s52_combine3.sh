#!/usr/bin/env bash
# Session 52 (issue 6): the final form of the narrow tile's combines (sum_pieces' second form, with split_kv.h's
# combine kept compiled in behind an always-true row check, which keeps ptxas's schedule of the key-block loop)
# against session 51's tree (s52_combine3.patch reversed), s52_combine.sh's call without the trace: rows, the
# KV-cache / split-KV / workspace / cuda_sm90 suites, memcheck / racecheck / synccheck, pytest on the GPU.
# Prediction (s52_combine2.sh: 8-row tiles 0.70-0.94, the one-unit rows 1.00-1.02, d256 16/8 1.024, with the
# key-block loops 1-15% longer): the 8-row rows as there or ~1% lower, the one-unit rows 0.98-1.00 and d256 16/8
# at or below 1.00.
#   bash bench/integration/s52_combine3.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s52d
patch_ab_builds bench/integration/s52_combine3.patch
rows_ab s52_combine.py combine
decode_change_checks
log total
