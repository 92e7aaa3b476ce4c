#!/usr/bin/env bash
# Session 39 (issue 6): what the 1.1 us between a d128 tile's last P V and its successor's first S issue waits for.
# s39_epitrace.sh put it at 1.1 us (p90 1.6) per tile at non-causal 2k-16k; releasing Q's buffer early
# (s39_qrelease.sh) did not shorten it. This call: s39_epitrace.sh's per-warp trace with begin_tile's steps (the next
# tile's index received, its Q landed, its first K landed, the issue turn taken, Q's fragments loaded, its first S
# issued; s39_begintrace.patch), read by bench/gap_trace.py (consecutive events' gaps) at d128 non-causal 2k / 4k /
# 16k. For the next session's producer order.
# Prediction: the next Q's landing (h -> q) holds most of it.
# One H200 call (~1.5 minutes).
#   bash bench/integration/s39_begintrace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s39g
tree_copy "$bld/trace-tree" bench/integration/s39_begintrace.patch
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
  python3 bench/gap_trace.py "$bld/trace_$s.bin" >>"$out/summary.txt" 2>&1
done
cp "$out/summary.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
