#!/usr/bin/env bash
# Session 5 (issue 4, helper sm80t), device call 2 of 2: whole_tile_loads (K/V and Q tiles copied
# without per-copy bounds tests) verified and measured.
#  1. one build (d64/128/256 bf16, sm_90, no backward) of the tests and the Python extension from the
#     checked-in table, which turns whole_tile_loads on for every plain entry and default; in parallel the
#     tuning harness (tools/kernels/sm80t_candidates2.json: each table shape with and without it);
#  2. the cuda_sm80 forward/varlen/KV-cache/combine/robustness/determinism suites, racecheck;
#  3. the harness rows (N(0, 1) inputs): A/B of whole_tile_loads per shape in one process;
#  4. bench/sm80t_peers.py: ours vs FA2 exactly as compare.py measures them, every standard row;
#  5. ncu of the d256 s = 2048 table kernel (instruction counts against call 1's).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80t-out2
final="${OUT:-$PWD/sm80t-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1
filter="*Forward*cuda_sm80*:*Varlen*cuda_sm80*:*KVCache*cuda_sm80*:*Combine*cuda_sm80*:*CudaRobustness*:*Determinism*cuda_sm80*"
sanitize="Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*:*CudaRobustness*"

stamp "builds"
(timeout 170 python3 tools/kernels/tune_forward.py --build-only --head-dims "64;128;256" --dtypes bf16 \
  --candidates tools/kernels/sm80t_candidates2.json --build build/tune2 >"$out/tune_build.txt" 2>&1) &
tune_build=$!
cmake -S . -B build/gpu -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_HEAD_DIMS="64;128;256" \
  -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF \
  -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=ON -DPython_EXECUTABLE="$(command -v python3)" \
  -DFLASHATTN_PTXAS_VERBOSE=ON >"$out/configure.log" 2>&1 &&
  timeout 200 cmake --build build/gpu --target flashattn_tests _C -j 16 >"$out/build.log" 2>&1
stamp "build rc=$?"; grep -m5 -A6 " error" "$out/build.log"
rm -rf build/pyroot && mkdir -p build/pyroot && cp -r python/flashattn build/pyroot/ &&
  cp build/gpu/python/_C*.so build/pyroot/flashattn/
grep -E "Compiling entry|registers|spill" "$out/build.log" | grep -B1 -A1 "forward_kernel" | sed 's/.*ForwardConfigILi//' \
  >"$out/ptxas_library.txt"

tests=build/gpu/tests/flashattn_tests
timeout 100 "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$out/tests.txt" 2>&1
stamp "tests rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
grep -E 'FAILED' "$out/tests.txt" | head -20
for tool in racecheck; do
  timeout 75 compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$sanitize" \
    --gtest_brief=1 >"$out/$tool.txt" 2>&1
  stamp "$tool rc=$? $(grep -m1 'SUMMARY' "$out/$tool.txt") $(tail -1 "$out/$tool.txt")"
done
wait $tune_build
stamp "tune build rc=$?"; tail -3 "$out/tune_build.txt"
cat build/tune2/obj/*.ptxas.txt 2>/dev/null | grep -E "Compiling|registers|spill" | sed 's/.*ForwardConfigILi//' \
  >"$out/ptxas.txt"
bin=build/tune2/sm80_tune

for d in 256 128 64; do
  SM80_NORMAL=1 SM80_DIMS=$d SM80_GENERAL_SEQLEN=1 timeout 45 "$bin" 512,1024,2048,4096,8192,16384 \
    >"$out/rows_d$d.jsonl" 2>&1
  stamp "rows d$d rc=$?"
done
PYTHONPATH=$PWD/build/pyroot timeout 70 python3 bench/sm80t_peers.py 256,128,64 >"$out/peers.jsonl" 2>&1
stamp "peers rc=$?"
sections="--section WarpStateStats --section SourceCounters --section InstructionStats --section SpeedOfLight"
# shellcheck disable=SC2086
SM80_DIMS=256 SM80_TABLE_ONLY=1 SM80_CAUSAL=0 SM80_NORMAL=1 timeout 45 ncu $sections -k regex:forward_kernel \
  --launch-skip 3 --launch-count 1 -o "$out/ncu_ours_2048w" "$bin" 2048 >"$out/ncu_ours_2048w.log" 2>&1
stamp "ncu rc=$?"
if [[ -f $out/ncu_ours_2048w.ncu-rep ]]; then
  timeout 30 ncu -i "$out/ncu_ours_2048w.ncu-rep" --page details >"$out/ncu_ours_2048w.txt" 2>&1
  timeout 30 ncu -i "$out/ncu_ours_2048w.ncu-rep" --page source --csv --print-source sass \
    >"$out/ncu_ours_2048w.sass.csv" 2>&1
  rm -f "$out/ncu_ours_2048w.ncu-rep"
fi

nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1
stamp done
tar -czf "$final/sm80t2.tgz" -C "$out" .
cp "$out/run.txt" "$out/peers.jsonl" "$final/" 2>/dev/null
