#!/usr/bin/env bash
# RECORD of one device call on tree 0ca1c12 (results: bench/sm80v_results.md, docs/kernel-notes.md v12). The table
# committed after it (93150fa) narrows two rows of the tested one: d128 causal grouped s <= 2048 (was 16384), and
# approx_epilogue on a d128 non-causal s <= 512 row instead of the main entry.
# Session 7 (issue 4, helper sm80v), device call 2 of 2: verification of this tree's table (d64 causal s <= 512
# heads fastest, 512 < s <= 16384 grouped + whole_tile_loads + late_copies + approx_epilogue; d128 causal s <= 16384
# grouped, the main entry's shape + approx_epilogue; approx_epilogue on the d128 non-causal main entry and the d64
# non-causal s <= 512 row) and the A/B of each change against the old rows, in the same call.
#  1. background (nice 19): test build T = this tree (its table), d64/d128, bf16 + fp16, sm_90, no backward, with
#     -DFLASHATTN_SM80_TEST_HEAD_GROUP=3 (every heads-fastest problem in groups of 3 triples, so the suites' small
#     problems run the grouped decode, a short last group included);
#  2. the tuning harness from this table twice (tools/kernels/sm80v_candidates2c.json / 2n.json), every timing
#     >= 100 ms: "table" / "table_100ms" / "table_end" (the new table: the control), candidates = the old rows'
#     shapes and the new ones; causal d64/d128 s = 512 ... 16k in heads-fastest (the old order) and grouped
#     (factor 2) order, non-causal d64/d128 s = 512 ... 2k;
#  3. FA2 on compare.py's tensors in the same call (bench/sm80u_peers.py);
#  4. build T's cuda_sm80 forward/varlen/KV-cache suites, racecheck and memcheck on the odd small shapes.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80v-out2
final="${OUT:-$PWD/sm80v-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'tar -czf "$final/sm80v2.tgz" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
gpu_state() { nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1; }
gpu_state
filter="*Forward*cuda_sm80*:*Varlen*cuda_sm80*:*KVCache*cuda_sm80*"
sanitize="Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*:*CudaRobustness*"

(cmake -S . -B build/testT -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 \
  -DFLASHATTN_HEAD_DIMS="64;128" -DFLASHATTN_DTYPES="bf16;fp16" -DFLASHATTN_BACKWARD=OFF \
  -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
  -DCMAKE_CUDA_FLAGS="-DFLASHATTN_SM80_TEST_HEAD_GROUP=3" >"$out/t_configure.log" 2>&1 &&
  nice -n 19 timeout 190 cmake --build build/testT --target flashattn_tests -j 16 >"$out/t_build.log" 2>&1) &
build_t=$!

stamp "tune builds"
timeout 80 python3 tools/kernels/tune_forward.py --build-only --head-dims "64;128" --dtypes bf16 \
  --candidates tools/kernels/sm80v_candidates2c.json --build build/tune2c >"$out/tune_build_c.txt" 2>&1
stamp "tune build causal rc=$?"; tail -3 "$out/tune_build_c.txt"
timeout 60 python3 tools/kernels/tune_forward.py --build-only --head-dims "64;128" --dtypes bf16 \
  --candidates tools/kernels/sm80v_candidates2n.json --build build/tune2n >"$out/tune_build_n.txt" 2>&1
stamp "tune build non-causal rc=$?"; tail -3 "$out/tune_build_n.txt"
cat build/tune2c/obj/*.ptxas.txt build/tune2n/obj/*.ptxas.txt 2>/dev/null | grep -E "Compiling|registers|spill" |
  sed 's/.*ForwardConfigILi//' >"$out/ptxas.txt"
common="SM80_MIN_MS=100 SM80_NORMAL=1 SM80_ONE_ORDER=1 SM80_BF16_ONLY=1 SM80_GENERAL_SEQLEN=0"
for d in 64 128; do
  env $common SM80_CAUSAL=1 SM80_DIMS=$d SM80_GROUP_FACTORS=2 timeout 50 build/tune2c/sm80_tune \
    512,1024,2048,4096,8192,16384 >"$out/rows_d${d}c.jsonl" 2>&1
  stamp "rows d$d causal rc=$?"
done
for d in 64 128; do
  env $common SM80_CAUSAL=0 SM80_DIMS=$d timeout 25 build/tune2n/sm80_tune 512,1024,2048 >"$out/rows_d${d}n.jsonl" 2>&1
  stamp "rows d$d non-causal rc=$?"
done
timeout 30 python3 bench/sm80u_peers.py 64,128 512,1024,2048,4096,8192,16384 1 >"$out/fa2_c.jsonl" 2>&1
stamp "fa2 causal rc=$?"
timeout 15 python3 bench/sm80u_peers.py 64,128 512,1024,2048 0 >"$out/fa2_n.jsonl" 2>&1
stamp "fa2 non-causal rc=$?"
gpu_state
python3 bench/sm80v_table.py "$out"/rows_d64c.jsonl "$out"/rows_d128c.jsonl "$out"/rows_d64n.jsonl \
  "$out"/rows_d128n.jsonl --fa2 "$out/fa2_c.jsonl" --fa2 "$out/fa2_n.jsonl" >"$out/summary.txt" 2>&1
cat "$out/summary.txt"

wait $build_t
stamp "build T rc=$?"; grep -m5 -A6 " error" "$out/t_build.log"
tests=build/testT/tests/flashattn_tests
timeout 60 "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$out/tests.txt" 2>&1
stamp "tests rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
grep -E 'FAILED' "$out/tests.txt" | head -20
# Both sanitizers at once (two processes on the one GPU), in the time left.
left=$(( 282 - ($(date +%s) - t0) ))
if (( left > 15 )); then
  for tool in racecheck memcheck; do
    timeout $(( left < 90 ? left : 90 )) compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" \
      --gtest_filter="$sanitize" --gtest_brief=1 >"$out/$tool.txt" 2>&1 &
  done
  wait
  for tool in racecheck memcheck; do
    stamp "$tool $(grep -m1 'SUMMARY' "$out/$tool.txt") $(tail -2 "$out/$tool.txt" | tr '\n' ' ')"
  done
else
  stamp "sanitizers skipped (time)"
fi
stamp done
cp "$out/run.txt" "$final/" 2>/dev/null
