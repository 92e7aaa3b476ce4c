#!/usr/bin/env bash
# Session 7 (issue 4, helper sm80w), device call 2 of 2: the d256 table proposal, verified, and timed beside
# FA2 and the old table's kernels.
#  1. in the background: test build A = this tree with table A (every plain d256 row: the 64 x 64 single-buffer
#     rows + early_k_copy + panel_loads + mask_bounds, the 1x8x64 ring rows panel_loads + mask_bounds instead of
#     whole_tile_loads), d64/128/256, bf16 + fp16; test build B = table A + qk_step_ahead on those rows, d256 only;
#  2. the tuning harness (committed table = the old one, its rows "table*"), d256 bf16, candidates
#     bench/sm80w_candidates2.json: old short-row kernel (first and last: the control), E N, E N M, E N K, E N K M,
#     ring W (old long rows), ring N, N M, N K M; all timings sustained (SM80_MIN_MS=100); FA2 in the same call;
#  3. suites of A and B, then racecheck + memcheck on the odd small shapes (A, then B while time is left).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80w-out2
final="${OUT:-$PWD/sm80w-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'tar -czf "$final/sm80w2.tgz" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader \
  >>"$out/run.txt" 2>&1
filter="*Forward*cuda_sm80*:*Varlen*cuda_sm80*:*KVCache*cuda_sm80*"
sanitize="Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*:*CudaRobustness*"

# make_tree DIR STEP_AHEAD: a copy of this tree whose table has the proposal (qk_step_ahead too if 1).
make_tree() {
  rm -rf "$1" && mkdir -p "$1"
  tar --exclude='./build*' -cf - . | tar -C "$1" -xf -
  python3 - "$1/src/cuda/sm80/forward_tuning.json" "$2" >"$out/table_$(basename "$1").txt" <<'PY'
import json, sys
path, step_ahead = sys.argv[1], sys.argv[2] == "1"
table = json.load(open(path))
for e in table["entries"]:
    if e["head_dim"] != 256 or e.get("general"):
        continue
    s = e["shape"]
    if s["stages"] == 1:
        s["early_k_copy"] = True
    s.pop("whole_tile_loads", None)
    s["panel_loads"] = s["mask_bounds"] = True
    if step_ahead:
        s["qk_step_ahead"] = True
    print(e["causal"], e.get("max_seqlen_q"), e.get("order"), s)
json.dump(table, open(path, "w"), indent=2)
PY
}
make_tree /tmp/sm80w-srcA 0
make_tree /tmp/sm80w-srcB 1
cmake_common="-G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_DTYPES=bf16;fp16 \
  -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
  -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_PTXAS_VERBOSE=ON"
# shellcheck disable=SC2086
(cmake -S /tmp/sm80w-srcA -B build/testA $cmake_common -DFLASHATTN_HEAD_DIMS="64;128;256" \
  >"$out/a_configure.log" 2>&1 && nice -n 5 timeout 200 cmake --build build/testA --target flashattn_tests -j 16 \
  >"$out/a_build.log" 2>&1) &
build_a=$!
# shellcheck disable=SC2086
(cmake -S /tmp/sm80w-srcB -B build/testB $cmake_common -DFLASHATTN_HEAD_DIMS="256" \
  >"$out/b_configure.log" 2>&1 && nice -n 10 timeout 200 cmake --build build/testB --target flashattn_tests -j 16 \
  >"$out/b_build.log" 2>&1) &
build_b=$!

stamp "tune build"
timeout 90 python3 tools/kernels/tune_forward.py --build-only --head-dims 256 --dtypes bf16 \
  --candidates bench/sm80w_candidates2.json --build build/tune-w2 >"$out/tune_build.txt" 2>&1
stamp "tune build rc=$?"; tail -3 "$out/tune_build.txt"
cat build/tune-w2/obj/*.ptxas.txt 2>/dev/null | grep -E "Compiling|registers|spill" | sed 's/.*ForwardConfigILi//' \
  >"$out/ptxas.txt"
bin=build/tune-w2/sm80_tune
common="SM80_NORMAL=1 SM80_BF16_ONLY=1 SM80_GENERAL_SEQLEN=0 SM80_MIN_MS=100 SM80_DIMS=256"
env $common SM80_ONE_ORDER=1 SM80_CAUSAL=0 timeout 60 "$bin" 512,1024,2048,4096,8192,16384 \
  >"$out/rows_nc.jsonl" 2>&1
stamp "rows non-causal rc=$?"
env $common SM80_CAUSAL=1 timeout 20 "$bin" 512 >"$out/rows_c512.jsonl" 2>&1
stamp "rows causal 512 rc=$?"
env $common SM80_ONE_ORDER=1 SM80_CAUSAL=1 timeout 50 "$bin" 1024,2048,4096,8192,16384 >"$out/rows_c.jsonl" 2>&1
stamp "rows causal rc=$?"
timeout 30 python3 bench/sm80u_peers.py 256 >"$out/fa2.jsonl" 2>&1
stamp "fa2 rc=$?"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1

for v in a b; do
  if [[ $v == a ]]; then wait $build_a; else wait $build_b; fi
  stamp "build ${v^^} rc=$?"; grep -m5 -A6 " error" "$out/${v}_build.log"
  grep -E "Compiling entry|registers|spill" "$out/${v}_build.log" | grep -A2 "forward_kernel.*Li256E" |
    sed 's/.*ForwardConfigILi//' >"$out/ptxas_${v}.txt"
  tests=build/test${v^^}/tests/flashattn_tests
  left=$(( 268 - ($(date +%s) - t0) ))
  (( left > 10 )) || { stamp "tests ${v^^} skipped (time)"; continue; }
  timeout $(( left < 70 ? left : 70 )) "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$out/tests_$v.txt" 2>&1
  stamp "tests ${v^^} rc=$? $(tail -3 "$out/tests_$v.txt" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests_$v.txt" | head -20
done
for v in a b; do
  tests=build/test${v^^}/tests/flashattn_tests
  for tool in racecheck memcheck; do
    left=$(( 272 - ($(date +%s) - t0) ))
    (( left > 12 )) || { stamp "$tool ${v^^} skipped (time)"; continue; }
    timeout $(( left < 50 ? left : 50 )) compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" \
      --gtest_filter="$sanitize" --gtest_brief=1 >"$out/${tool}_$v.txt" 2>&1
    stamp "$tool ${v^^} rc=$? $(grep -m1 'SUMMARY' "$out/${tool}_$v.txt") $(tail -1 "$out/${tool}_$v.txt")"
  done
done
stamp done
cp "$out/run.txt" "$final/" 2>/dev/null
