#!/usr/bin/env bash
# Session 5 (issue 4, helper sm80t), device call 1 of 2: where d256 loses against FA2, and how
# compare.py's ratios relate to the tuning harness's.
#  1. builds in parallel: the tuning harness (d256 bf16 only; tools/kernels/sm80t_candidates1.json) and
#     the Python extension (d64/128/256 bf16, sm_90, no backward) that compare.py's flashattn_sm80 calls;
#  2. ncu (warp states, source counters, instruction stats, shared-memory tables, occupancy) of ours at
#     d256 s = 2048 (the table's s <= 2048 kernel) and s = 4096 (the long-row kernel) and of FA2 at s = 2048;
#  3. bench/sm80t_peers.py: ours vs FA2 exactly as compare.py measures (two passes, and FA2 on the
#     (b, h, s, d) layout the old harness used), every standard row;
#  4. the harness's d256 candidates on N(0, 1) inputs (compare.py's distribution), then the table rows
#     on U(-1, 1) (the harness's old distribution).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80t-out
final="${OUT:-$PWD/sm80t-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
python3 -c "import torch; print('torch', torch.__version__)" >>"$out/run.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1

stamp "builds"
(timeout 170 python3 tools/kernels/tune_forward.py --build-only --head-dims 256 --dtypes bf16 \
  --candidates tools/kernels/sm80t_candidates1.json --build build/tune >"$out/tune_build.txt" 2>&1) &
tune_build=$!
(cmake -S . -B build/py -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_HEAD_DIMS="64;128;256" \
  -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_CLI=OFF \
  -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=ON -DPython_EXECUTABLE="$(command -v python3)" \
  >"$out/py_configure.log" 2>&1 && timeout 200 cmake --build build/py --target _C -j 16 >"$out/py_build.log" 2>&1 &&
  rm -rf build/pyroot && mkdir -p build/pyroot && cp -r python/flashattn build/pyroot/ &&
  cp build/py/python/_C*.so build/pyroot/flashattn/) &
py_build=$!
wait $tune_build
stamp "tune build rc=$?"; tail -3 "$out/tune_build.txt"
cat build/tune/obj/*.ptxas.txt 2>/dev/null | grep -E "Compiling|registers|spill" | sed 's/.*ForwardConfigILi//' \
  >"$out/ptxas.txt"
bin=build/tune/sm80_tune

sections="--section WarpStateStats --section SourceCounters --section InstructionStats --section SpeedOfLight \
  --section MemoryWorkloadAnalysis_Tables --section Occupancy --section LaunchStats"
for s in 2048 4096; do
  # shellcheck disable=SC2086
  SM80_DIMS=256 SM80_TABLE_ONLY=1 SM80_CAUSAL=0 SM80_NORMAL=1 timeout 45 ncu $sections -k regex:forward_kernel \
    --launch-skip 3 --launch-count 1 -o "$out/ncu_ours_$s" "$bin" $s >"$out/ncu_ours_$s.log" 2>&1
  stamp "ncu ours s=$s rc=$?"
done
# shellcheck disable=SC2086
FA2_PROFILE=1 timeout 45 ncu $sections -k regex:flash_fwd --launch-skip 2 --launch-count 1 -o "$out/ncu_fa2_2048" \
  python3 bench/sm80_fa2_fixed_cost.py 256 2048 2048 >"$out/ncu_fa2_2048.log" 2>&1
stamp "ncu fa2 rc=$?"
wait $py_build
stamp "python build rc=$?"; grep -m5 -B2 -A8 "error" "$out/py_build.log" | head -30
for rep in "$out"/ncu_*.ncu-rep; do
  [[ -f $rep ]] || continue
  base=${rep%.ncu-rep}
  timeout 30 ncu -i "$rep" --page details >"$base.txt" 2>&1
  timeout 30 ncu -i "$rep" --page source --csv --print-source sass >"$base.sass.csv" 2>&1
done
stamp "ncu exported"

PYTHONPATH=$PWD/build/pyroot timeout 75 python3 bench/sm80t_peers.py 64,128,256 >"$out/peers.jsonl" 2>&1
stamp "peers rc=$?"
SM80_NORMAL=1 SM80_DIMS=256 SM80_GENERAL_SEQLEN=1 timeout 70 "$bin" 512,1024,2048,4096,8192,16384 \
  >"$out/rows_normal.jsonl" 2>&1
stamp "rows normal rc=$?"
SM80_DIMS=256 SM80_TABLE_ONLY=1 timeout 25 "$bin" 512,1024,2048,4096,8192,16384 >"$out/rows_uniform.jsonl" 2>&1
stamp "rows uniform rc=$?"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1
stamp done
tar -czf "$final/sm80t1.tgz" -C "$out" .
cp "$out/run.txt" "$out/peers.jsonl" "$final/" 2>/dev/null
