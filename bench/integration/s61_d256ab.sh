#!/usr/bin/env bash
# Session 61: two reads of the d = 256 backward (backward_consumer_split_head_dim) in one call. (1) DQ_FIRST:
# dQ's two slices issued before dV's and dK's GEMMs, so that their atomics run beside those (predicted 0.92-0.97x
# the time); the test binary and the package flashattn are built with it, the d256 grid cases run on it.
# (2) A diagnostic build without the dQ atomics (wrong dQ; flashattn_noatomics) against the tree: what the atomics
# cost. Base: the tree (flashattn_base, DQ_FIRST 0). Local ptxas: no spills in either variant.
# (Run in session 61 on b5298fd. DQ_FIRST was then kept and its switch removed: the order is the code,
# so the -D below no longer changes anything.)
#   bash bench/integration/s61_d256ab.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s61e
PY_DIMS=256 sm90_build_py base "" 5 300 -DFLASHATTN_BACKWARD=ON &
PY_DIMS=256 sm90_build_py noatomics "-DFLASHATTN_SM90_BWD_D256_NO_DQ_ATOMICS=1" 5 300 -DFLASHATTN_BACKWARD=ON &
TREE_CUDA_FLAGS="-DFLASHATTN_SM90_BWD_D256_DQ_FIRST=1" tests_and_py_build "256"
wait
first_cases 'Grid/BackwardTest.*cuda_sm90_*_d256_*:Random/BackwardRandomTest.*cuda_sm90*' 90
for base in base noatomics; do
  (PYTHONPATH=$bld/pyroot timeout 90 python3 bench/backward_compare.py --base-package "flashattn_$base" \
    --hdims 256 --seqlens 1024,4096,16384 --rounds 2 --settle-ms 100 --check-max-seqlen 1024 \
    --backends cuda_sm90 --base-backends cuda_sm90 >"$out/ab_$base.jsonl" 2>"$out/ab_$base.err")
  log "compare vs $base rc=$? $(tail -2 "$out/ab_$base.err" | cut -c1-300)"
done
log total
