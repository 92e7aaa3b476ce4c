#!/usr/bin/env bash
# Session 47 (issue 6): where the narrow decode tile's time goes (s47_narrowtrace.patch: session 46's DecodeTrace,
# its producer and kernel events, and the narrow consumer's: L tile, per block K (K landed), S (S^T done), X (the
# maxima exchanged), V (V landed), P (P^T written), O (O^T done); R record, A arrival, C combine, E store).
# bench/decode_trace_driver.cu through the C++ API (flash_attn_with_kvcache's arguments), graphed time per call,
# then one traced call, read by bench/decode_trace.py: d128 and d64 (GQA 32/8) at 16k keys batch 1, d128 at 1k.
# Prediction: at 16k keys each block's K and V arrive late (K -> the previous O ~1 us: the loads set the pace) or
# the chain K -> O is ~1.3 us (the consumer does).
#   bash bench/integration/s47_narrowtrace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s47t
tree_copy "$bld/trace-tree" bench/integration/s47_narrowtrace.patch
cmake -S "$bld/trace-tree" -B "$bld/lib" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a \
  -DFLASHATTN_HEAD_DIMS="64;128" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF \
  -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF >"$out/lib.log" 2>&1 &&
  timeout 300 cmake --build "$bld/lib" --target flashattn -j 16 >>"$out/lib.log" 2>&1 &&
  nvcc -std=c++20 -O2 -I"$bld/trace-tree/include" bench/decode_trace_driver.cu "$bld/lib/src/libflashattn.a" \
    -Xcompiler -fopenmp -o "$bld/trace" >>"$out/lib.log" 2>&1
log "trace build rc=$?"
tail -5 "$out/lib.log" >>"$out/summary.txt"
for run in 16384:1:128 16384:1:64 1024:1:128 4096:4:64; do
  IFS=: read -r keys batch d <<<"$run"
  {
    echo "== d$d keys $keys batch $batch"
    timeout 60 "$bld/trace" "$keys" "$batch" kvcache "$bld/trace.bin" "$d"
    if [[ $batch == 1 ]]; then
      timeout 60 python3 bench/decode_trace.py "$bld/trace.bin" --ctas 2
    else
      timeout 60 python3 bench/decode_trace.py "$bld/trace.bin" --brief
    fi
  } >>"$out/summary.txt" 2>&1
  log "run $run"
done
log total
