#!/usr/bin/env bash
# Session 39 (issue 6): s39_tailcost.sh read the split tail's loss as time, not power (ncu, clocks locked: d128 2k
# 502.7 -> 515.9 us with the tail, d256 1k 249.2 -> 272.0 us): a fixed ~25-40 us per call where the tail should have
# saved 8-16 us. Two suspects, both in this call:
#  - the combine waiting on L2 latency (few loads in flight): the combine now taking its own piece from registers and
#    loading the other records in batches (t1new, HEAD) against the old one (t1old, s39_oldcombine.patch) and no
#    tail (t0), under ncu (d128 2k / 4k) and in 400 ms stints beside cuDNN (2k / 4k / 16k, two passes);
#  - anything else: a CLI build with a trace (s39_tailtrace.patch: the global timer at each tile's and piece's
#    start, epilogue and end, the record's write and arrival, per consumer warpgroup, into the workspace), read by
#    bench/tail_trace.py at d128 2k / 4k / 16k.
# Prediction: if the combine is the cost, t1new at 2k reads at or above t0 and the trace shows the epilogues of split
# pieces (P -> E) near a static tile's; otherwise the trace says where the tail's time goes.
# One H200 call (~4 minutes).
#   bash bench/integration/s39_tailtrace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s39r
tree_copy "$bld/old-tree" bench/integration/s39_oldcombine.patch
tree_copy "$bld/trace-tree" bench/integration/s39_tailtrace.patch
PY_DIMS=128 sm90_build_py t0 "-DFLASHATTN_SM90_SPLIT_TAIL=0" 4 300 &
PY_DIMS=128 sm90_build_py t1new "-DFLASHATTN_SM90_SPLIT_TAIL=1" 4 300 &
(cd "$bld/old-tree" && PY_DIMS=128 sm90_build_py t1old "-DFLASHATTN_SM90_SPLIT_TAIL=1" 4 300) &
(cmake -S "$bld/trace-tree" -B "$bld/cli" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a \
  -DFLASHATTN_HEAD_DIMS=128 -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF \
  -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_BUILD_CLI=ON -DFLASHATTN_BUILD_EXAMPLES=OFF \
  -DCMAKE_CUDA_FLAGS="-DFLASHATTN_SM90_SPLIT_TAIL=1" >"$out/cli_configure.log" 2>&1 &&
  timeout 300 cmake --build "$bld/cli" --target flashattn_cli -j 4 >"$out/cli_build.log" 2>&1
  log "trace CLI build rc=$?") &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/cli_configure.log
cli=$bld/cli/tools/cli/flashattn
for s in 2048 4096 16384; do
  b=$((16384 / s))
  FLASHATTN_TAIL_TRACE=$bld/trace_$s.bin timeout 60 "$cli" run --backend cuda_sm90 --repeat 5 --verify none \
    -b $b --heads 16 --seqlen-q $s --seqlen-k $s --head-dim 128 >>"$out/trace.txt" 2>&1
  log "trace $s rc=$?"
  echo "== d128 non-causal $s (b $b)" >>"$out/trace.txt"
  python3 bench/tail_trace.py "$bld/trace_$s.bin" --ctas 4 >>"$out/trace.txt" 2>&1
done
metrics="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum"
PYTHONPATH=$bld/pyroot:bench timeout 120 ncu --metrics "$metrics" --profile-from-start off --csv --page raw \
  python3 bench/ncu_grid_target.py --rows 128:0:2048,128:0:4096 --builds t0,t1old,t1new >"$bld/ncu.csv" \
  2>"$bld/ncu_err.txt"
log "ncu rc=$? $(tail -1 "$bld/ncu_err.txt")"
python3 - "$bld/ncu.csv" "$metrics" >>"$out/summary.txt" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
idx = {h: j for j, h in enumerate(rows[0])}
print("ncu: rows d128 non-causal 2k, 4k x builds t0, t1old, t1new")
for r in rows[2:]:
    print("  " + " ".join(f"{m.split('__')[1].split('.')[0]}={r[idx[m]]}" for m in sys.argv[2].split(",")))
PY
for pass in p1 p2; do
  sustained_rows t0,t1old,t1new 128 0 2048,4096,16384 "$pass" 400 120
  log "stints $pass"
done
sustained_summary t0 t1old t1new
cp "$out/ab.jsonl" "$out/trace.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
