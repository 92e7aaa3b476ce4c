#!/usr/bin/env bash
# Session 46 (issue 6): is the decode kernel's time per piece cold code? s46_decodetrace2.sh read every step of a
# piece at 0.2-0.9 us, however little it does (two mbarrier waits and a record of 4 rows 0.3 us, one block's
# softmax 0.9 us, the combine 2.1 us and, in its slot-by-slot form with more code, 2.8 us), and each CTA runs one
# piece, so all of it runs once per SM. Two readings in one call:
#  - the trace (s46_decodetrace2.patch, now with FLASHATTN_TRACE_GRID capping the grid) of dense 1024 keys batch 1
#    at 64 CTAs (one piece each), 32 (two) and 16 (four): a CTA's later pieces run warm code;
#  - ncu's WarpStateStats (raw, the stall reasons) of the KV-cache and dense forms at 64 CTAs.
# Prediction: if cold code, the second piece's steps are 2-3x shorter than the first's and ncu's "no instruction"
# stall is the largest reason; if not, they match and the stalls sit on barriers and memory.
# One H200 call (~2 minutes).
#   bash bench/integration/s46_decodetrace3.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s46v
tree_copy "$bld/trace-tree" bench/integration/s46_decodetrace2.patch
cmake -S "$bld/trace-tree" -B "$bld/lib" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a \
  -DFLASHATTN_HEAD_DIMS=128 -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF \
  -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF >"$out/lib.log" 2>&1 &&
  timeout 300 cmake --build "$bld/lib" --target flashattn -j 16 >>"$out/lib.log" 2>&1 &&
  nvcc -std=c++20 -O2 -I"$bld/trace-tree/include" bench/decode_trace_driver.cu "$bld/lib/src/libflashattn.a" \
    -Xcompiler -fopenmp -o "$bld/trace" >>"$out/lib.log" 2>&1
log "trace build rc=$?"
for grid in 64 32 16; do
  {
    echo "== dense keys 1024 batch 1, grid $grid"
    FLASHATTN_TRACE_GRID=$grid timeout 60 "$bld/trace" 1024 1 dense "$bld/trace.bin"
    timeout 60 python3 bench/decode_trace.py "$bld/trace.bin" --ctas 2 | grep -v "^ "
  } >>"$out/summary.txt" 2>&1
done
log "grids"
for mode in kvcache dense; do
  timeout 120 ncu --kernel-name regex:forward_kernel --launch-skip 30 --launch-count 1 --section WarpStateStats \
    --page raw --csv "$bld/trace" 1024 1 "$mode" "$bld/x.bin" >"$out/ncu_$mode.csv" 2>&1
  log "ncu $mode rc=$?"
  python3 - "$out/ncu_$mode.csv" <<'PY' >>"$out/summary.txt" 2>&1
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if len(rows) < 3:
    print(open(sys.argv[1]).read()[-1500:])
    sys.exit()
head, units, vals = rows[0], rows[1], rows[2]
pairs = [(h, v) for h, v in zip(head, vals) if "stall" in h or "warp_latency" in h or "cycles_active" in h]
def num(v):
    try:
        return float(v.replace(",", ""))
    except ValueError:
        return -1.0
for h, v in sorted(pairs, key=lambda hv: -num(hv[1]))[:30]:
    print(f"  {h} = {v}")
PY
done
log total
