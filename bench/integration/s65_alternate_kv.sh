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
# Result (session 65, H200): NOT KEPT. Time against the base 0.978-0.979x at 512 non-causal (d64 / d128) but
# 1.02-1.04x at 1k-4k (d64 / d128, causal and not), level at 16k. The trace confirms the boundary wait gone (d128
# 512: T -> K 0.9% of the time, was 6.9%) but the per-step V wait and the later V load cost more than it saved.
# Suites, synccheck and racecheck passed with it on. The switch left the tree; its code is
# s65_alternate_kv.patch (applies to the tree after the revert, commit after c70daa1), and s65_bwd_trace3.patch
# applies on top of it. Records: s65_alternate_kv_summary.txt, s65_alternate_kv.jsonl, s65_alternate_kv_trace.txt.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s65a
backward_switch_call alternate_vs_base bench/integration/s65_bwd_trace3.patch \
  "-DFLASHATTN_SM90_BWD_ALTERNATE_KV=1" ""
log total
