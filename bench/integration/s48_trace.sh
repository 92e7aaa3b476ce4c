#!/usr/bin/env bash
# Session 48 (issue 6): where a short decode's fixed time goes, inside the prepare kernel and the combine
# (s48_trace.patch: s47_narrowtrace.patch, plus the prepare kernel's thread 0 as list 500 and the combine's per
# batch of pieces as lists 256 + CTA; bench/decode_trace.py), on the narrow tile at d128 (GQA 32/8) and d256
# (16/8) with the automatic split count and with 8 pieces; then the split-count sweep of d256 narrow rows of 1-16
# tiles (s46_dims_rule.py FLASHATTN_DIMS_ROWS=narrow256tiles) on the tree's extension.
# Prediction: the combine's batches take one L2 round trip each (~0.7-1 us: 2 at 8 pieces, 4 at 16 d128, 8 at 16
# d256), the prepare kernel's maps ~0.5 us after its entry; 8 pieces beat 16 at d256 wherever tiles >= 8.
#   bash bench/integration/s48_trace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s48t
tree_copy "$bld/trace-tree" bench/integration/s48_trace.patch
(
  cmake -S "$bld/trace-tree" -B "$bld/lib" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a \
    -DFLASHATTN_HEAD_DIMS="128;256" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF \
    -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF >"$out/lib.log" 2>&1 &&
    timeout 300 cmake --build "$bld/lib" --target flashattn -j 9 >>"$out/lib.log" 2>&1 &&
    nvcc -std=c++20 -O2 -I"$bld/trace-tree/include" bench/decode_trace_driver.cu "$bld/lib/src/libflashattn.a" \
      -Xcompiler -fopenmp -o "$bld/trace" >>"$out/lib.log" 2>&1
  log "trace build rc=$?"
) &
PY_DIMS=256 sm90_build_py new "" 7 300
wait
tail -3 "$out/lib.log" >>"$out/summary.txt"
for run in 1024:1:128:0:32 16384:1:128:0:32 4096:1:256:0:16 4096:1:256:8:16 16384:1:256:0:16 16384:1:256:8:16; do
  IFS=: read -r keys batch d splits hq <<<"$run"
  {
    echo "== d$d keys $keys batch $batch splits $splits q heads $hq"
    timeout 60 "$bld/trace" "$keys" "$batch" kvcache "$bld/trace.bin" "$d" "$splits" "$hq"
    timeout 60 python3 bench/decode_trace.py "$bld/trace.bin" --ctas 1
  } >>"$out/summary.txt" 2>&1
  log "run $run"
done
(cd bench/integration && PYTHONPATH=$bld/pyroot FLASHATTN_DIMS_ROWS=narrow256tiles timeout 150 python3 s46_dims_rule.py) 2>&1 |
  grep -v Warning >"$out/splits256tiles.jsonl"
log "split sweep rc=$?"
grep "^#" "$out/splits256tiles.jsonl" >>"$out/summary.txt"
log total
