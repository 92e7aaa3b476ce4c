#!/usr/bin/env bash
# Session 39 (issue 6): where a d128 tile's epilogue time goes. s39_tailtrace.sh's trace (d128 2k, one launch) put a
# static tile's epilogue (after the next tile's first S is issued, to its end) at 1.0-1.1 us per consumer, both
# consumers in it at once, against ~45 us per 32-block tile at 4k: ~2% of the tile with the tensor cores mostly idle.
# This call: a CLI build with a per-warp trace (s39_epitrace.patch: the last P V's completion, begin_tile's end, O in
# shared memory, the proxy fence, the barrier, the TMA store's issue, the end), read by bench/epilogue_trace.py at d128
# non-causal 2k / 4k / 16k (SPLIT_TAIL=1, which the trace rides on: the last two static rounds are traced).
# Prediction: most of the microsecond in one phase (the barrier, waiting for the warpgroup's slowest warp, or the
# fence).
# One H200 call (~2 minutes).
#   bash bench/integration/s39_epitrace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s39p
tree_copy "$bld/trace-tree" bench/integration/s39_epitrace.patch
cmake -S "$bld/trace-tree" -B "$bld/cli" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a \
  -DFLASHATTN_HEAD_DIMS=128 -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF \
  -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_BUILD_CLI=ON -DFLASHATTN_BUILD_EXAMPLES=OFF \
  -DCMAKE_CUDA_FLAGS="-DFLASHATTN_SM90_SPLIT_TAIL=1" >"$out/cli_configure.log" 2>&1 &&
  timeout 300 cmake --build "$bld/cli" --target flashattn_cli -j 16 >"$out/cli_build.log" 2>&1
log "trace CLI build rc=$?"
rm -f "$out/cli_configure.log"
cli=$bld/cli/tools/cli/flashattn
for s in 2048 4096 16384; do
  b=$((16384 / s))
  FLASHATTN_TAIL_TRACE=$bld/trace_$s.bin timeout 60 "$cli" run --backend cuda_sm90 --repeat 5 --verify none \
    -b $b --heads 16 --seqlen-q $s --seqlen-k $s --head-dim 128 >>"$out/summary.txt" 2>&1
  log "trace $s rc=$?"
  echo "== d128 non-causal $s (b $b)" >>"$out/summary.txt"
  python3 bench/epilogue_trace.py "$bld/trace_$s.bin" >>"$out/summary.txt" 2>&1
done
cp "$out/summary.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
