#!/usr/bin/env bash
# Session 46 (issue 6): s46_decode_ab.sh read neither lever of s46_decodetrace.sh as a gain in graphed KV-cache decode
# steps (the combine of few rows 0.96-1.07 of base, three K/V stages 1.02-1.10), where the trace (the CLI:
# flash_attn_func's path, no prepare kernel, not graphed) had the combine at 2.0-3.1 us of an 8-12 us kernel.
# So the trace again, on the KV-cache path as the benchmark runs it: bench/decode_trace_driver.cu through the C++
# API (flash_attn_with_kvcache's arguments, or flash_attn_func's with "dense"), graphed time per call, then one
# traced call (s46_decodetrace2.patch: s46_decodetrace.patch on the session's tree, with the few-rows combine's
# events), for three builds of the trace: old (-DFLASHATTN_SM90_SPLIT_KV_FEW_ROWS=0), fr (the tree: few rows, two
# stages), st3 (-DFLASHATTN_SM90_DECODE_STAGES=3).
# Prediction: on the KV-cache path something before the first K (the prepare kernel's maps, their acquire, the
# descriptor fetches) holds the pieces longer than on the dense path, hiding the combine's saving.
# One H200 call (~3 minutes).
#   bash bench/integration/s46_decodetrace2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s46u
tree_copy "$bld/trace-tree" bench/integration/s46_decodetrace2.patch
trace_lib() {
  local name=$1 flags=$2
  cmake -S "$bld/trace-tree" -B "$bld/lib-$name" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a \
    -DFLASHATTN_HEAD_DIMS=128 -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF \
    -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
    -DCMAKE_CUDA_FLAGS="$flags" >"$out/lib_$name.log" 2>&1 &&
    timeout 300 cmake --build "$bld/lib-$name" --target flashattn -j 5 >>"$out/lib_$name.log" 2>&1 &&
    nvcc -std=c++20 -O2 -I"$bld/trace-tree/include" bench/decode_trace_driver.cu "$bld/lib-$name/src/libflashattn.a" \
      -Xcompiler -fopenmp -o "$bld/trace-$name" >>"$out/lib_$name.log" 2>&1
  log "trace build $name ($flags) rc=$?"
}
trace_lib old "-DFLASHATTN_SM90_SPLIT_KV_FEW_ROWS=0" &
trace_lib fr "" &
trace_lib st3 "-DFLASHATTN_SM90_DECODE_STAGES=3" &
wait
rm -f "$out"/lib_*.log
for shape in 1024:1 4096:1 16384:1 4096:4; do
  keys=${shape%:*} batch=${shape#*:}
  for mode in kvcache dense; do
    for name in old fr st3; do
      {
        echo "== $name $mode keys $keys batch $batch"
        timeout 60 "$bld/trace-$name" "$keys" "$batch" "$mode" "$bld/trace.bin"
        if [[ $shape == 1024:1 || $shape == 16384:1 ]] && [[ $mode == kvcache && $name != st3 ]]; then
          timeout 60 python3 bench/decode_trace.py "$bld/trace.bin" --ctas 2
        else
          timeout 60 python3 bench/decode_trace.py "$bld/trace.bin" --brief
        fi
      } >>"$out/summary.txt" 2>&1
    done
  done
  log "shape $shape"
done
log total
