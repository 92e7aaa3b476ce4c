#!/usr/bin/env bash
# Prepared in session 59 (not yet run): the backward kernel made persistent (s60_persistent.patch: at most one
# CTA a SM walking the tiles in snake rounds; the next tile's K / V load once the consumers' last GEMMs of the
# tile before are done, while they reduce its last dQ tile and store dK / dV). Predicted from session 59's ncu
# split (a CTA's fixed cost ~12 us at ncu's clocks, against ~2.9 us a step): 0.85-0.92 of the time at 512 tokens,
# 0.95-0.98 at 2k, ~1.0 from 8k. Compiles locally with the d128 and d64 two-consumer kernels free of local memory
# (the three-consumer one spills 20 B, 28 before). The patched tree's tests first (grid, drawn, racecheck /
# synccheck / memcheck), then the comparison against the tree without the patch built as flashattn_base.
#   bash bench/integration/s60_persistent.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s60p
tree_copy "$bld/base-tree" || exit 1
(cd "$bld/base-tree" && PY_DIMS="64;128" sm90_build_py base "" 6 400 -DFLASHATTN_BACKWARD=ON) &
patch -p1 -s <bench/integration/s60_persistent.patch || exit 1
tests_and_py_build "64;128"
wait
first_cases 'Grid/BackwardTest.*cuda_sm90_*300x517_b2_mha4_d128*' 60 || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d128_*:Grid/BackwardTest.*cuda_sm90_*_d64_*:-*1023x1024*' 240 \
  racecheck synccheck memcheck
(PYTHONPATH=$bld/pyroot timeout 300 python3 bench/backward_compare.py --hdims 64,128 --seqlens 512,1024,2048,8192 \
  --rounds 2 --base-package flashattn_base --out "$out/bwd.json" >"$out/bwd.jsonl" 2>"$out/bwd.err")
log "compare rc=$? $(tail -2 "$out/bwd.err" | cut -c1-300)"
log total
