#!/usr/bin/env bash
# Prepared in session 64 (not run): ALTERNATE_KV (backward_config.h, default 0; the switch's code is in the tree,
# its default kernels' SASS identical to the tree before it, compared locally for d64 / d128 default, d128
# deterministic and d64 softcap): the d64 / d128 kernels swap the K and V buffers' roles from tile to tile, so
# that the next tile's K and first Q / dO load into the buffer the tile's V leaves free after its last dP^T GEMM,
# and V waits only before the first dP^T GEMM. Local ptxas with it on: no spills, loops 17-20 instructions longer
# (the per-step V wait, the predicated release), 2 R2UR in the d128 loop. Tests on the tree with it on; the base
# package is the tree's defaults. Then the trace (s65_bwd_trace3.patch, with the switch on), the suites,
# synccheck and racecheck. Predicted: non-causal (persistent) d128 0.95-0.97x the time at 512, 0.97-0.99x at 1k,
# ~1.0 from 4k; d64 0.96-0.99x at 512-1k; causal (one CTA a tile) level. If kept: default 1, the verify call.
#   bash bench/integration/s65_alternate_kv.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s65a
tree_copy "$bld/trace-tree" bench/integration/s65_bwd_trace3.patch || exit 1
(cd "$bld/trace-tree" &&
  PY_DIMS="64;128" sm90_build_py trace "-DFLASHATTN_SM90_BWD_ALTERNATE_KV=1" 3 400 -DFLASHATTN_BACKWARD=ON) &
TREE_CUDA_FLAGS="-DFLASHATTN_SM90_BWD_ALTERNATE_KV=1" tree_and_flag_base "64;128" "" -DFLASHATTN_BACKWARD=ON
wait
backward_sm90_first_cases 150
backward_compare_vs_base alternate_vs_base 200 --hdims 64,128 --seqlens 512,1024,2048,4096,16384 --rounds 2 \
  --settle-ms 100 --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
backward_trace_rows
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*:-*dropout*:*2048x2048*' 100 synccheck racecheck
log total
