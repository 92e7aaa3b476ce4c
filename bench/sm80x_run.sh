#!/usr/bin/env bash
# RECORD of the device call on tree 12f8640 (results: bench/sm80x_results.md, docs/kernel-notes.md v14). The
# TileShape options it measures (whole_tile_ends, pair_stores) lost and were taken back out (commit after 12f8640):
# it runs only on that tree.
# Session 7 (issue 4, helper sm80x), the one device call: whole_tile_ends (E) and pair_stores (X), the ends of a
# whole query tile without per-row work (forward_config.h), against the table's kernels, FA2 in the same call.
#  1. background (nice 19): test build T = this tree with bench/sm80x_test_table.py's table (E on every d64/d128
#     row, X on the d128 ones), d64/d128, bf16 + fp16, sm_90, no backward, -DFLASHATTN_SM80_TEST_HEAD_GROUP=3;
#  2. the tuning harness with bench/sm80x_candidates.json (the table's d64/d128 shapes with and without E / E + X),
#     every timing >= 100 ms; "table" / "table_100ms" / "table_end" = the committed table (the control, three
#     readings); d64/d128 non-causal s = 512/1k/2k, causal 512/1k (heads fastest and grouped, factor 2); two passes;
#  3. FA2 on compare.py's tensors between the passes (bench/sm80u_peers.py);
#  4. spill/instruction counts from the tuning objects' SASS (cuobjdump);
#  5. T's cuda_sm80 forward/varlen/KV-cache suites, then racecheck and memcheck on small + whole-tile shapes.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80x-out
final="${OUT:-$PWD/sm80x-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'cp "$out/run.txt" "$final/" 2>/dev/null; tar -czf "$final/sm80x.tgz" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
gpu_state() { nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1; }
gpu_state
echo "tree $(cat TREE 2>/dev/null)" >>"$out/run.txt"  # TREE: written when the tree is copied for the call
filter="*Forward*cuda_sm80*:*Varlen*cuda_sm80*:*KVCache*cuda_sm80*"
sanitize="Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*:Grid/*cuda_sm80*_1023x1024_*:*CudaRobustness*"

tt=/tmp/sm80x-testtree
rm -rf "$tt" && mkdir -p "$tt" && tar --exclude='./build*' --exclude=./.git -cf - . | tar -C "$tt" -xf -
python3 bench/sm80x_test_table.py src/cuda/sm80/forward_tuning.json "$tt/src/cuda/sm80/forward_tuning.json"
(cmake -S "$tt" -B "$tt/build" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 \
  -DFLASHATTN_HEAD_DIMS="64;128" -DFLASHATTN_DTYPES="bf16;fp16" -DFLASHATTN_BACKWARD=OFF \
  -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
  -DCMAKE_CUDA_FLAGS="-DFLASHATTN_SM80_TEST_HEAD_GROUP=3" >"$out/t_configure.log" 2>&1 &&
  nice -n 19 timeout 170 cmake --build "$tt/build" --target flashattn_tests -j 16 >"$out/t_build.log" 2>&1) &
build_t=$!

stamp "tune build"
timeout 100 python3 tools/kernels/tune_forward.py --build-only --head-dims "64;128" --dtypes bf16 \
  --candidates bench/sm80x_candidates.json --build build/tunex >"$out/tune_build.txt" 2>&1
stamp "tune build rc=$?"; tail -3 "$out/tune_build.txt"
cat build/tunex/obj/*.ptxas.txt 2>/dev/null | grep -E "Function properties|registers|spill" |
  sed 's/.*ForwardConfigILi//' >"$out/ptxas.txt"
common="SM80_MIN_MS=100 SM80_NORMAL=1 SM80_ONE_ORDER=1 SM80_BF16_ONLY=1 SM80_GENERAL_SEQLEN=0"
pass() {
  for d in 64 128; do
    env $common SM80_CAUSAL=0 SM80_DIMS=$d timeout 30 build/tunex/sm80_tune 512,1024,2048 \
      >"$out/rows_d${d}n_$1.jsonl" 2>&1
    stamp "pass $1 d$d non-causal rc=$?"
    env $common SM80_CAUSAL=1 SM80_DIMS=$d SM80_GROUP_FACTORS=2 timeout 30 build/tunex/sm80_tune 512,1024 \
      >"$out/rows_d${d}c_$1.jsonl" 2>&1
    stamp "pass $1 d$d causal rc=$?"
  done
}
pass 1
timeout 30 python3 bench/sm80u_peers.py 64,128 512,1024,2048 0,1 >"$out/fa2.jsonl" 2>&1
stamp "fa2 rc=$?"
pass 2
gpu_state
for n in 1 2; do
  python3 bench/sm80x_table.py "$out"/rows_d64n_$n.jsonl "$out"/rows_d128n_$n.jsonl "$out"/rows_d64c_$n.jsonl \
    "$out"/rows_d128c_$n.jsonl --fa2 "$out/fa2.jsonl" >"$out/summary_$n.txt" 2>&1
  cat "$out/summary_$n.txt"
done
# Static SASS counts per kernel (spills: STL/LDL; the once-per-tile code is what E changes).
for o in build/tunex/obj/forward_sm80_hdim*_bf16*.cu.o; do
  cuobjdump -sass "$o" 2>/dev/null | awk -v f="$(basename "$o")" '
    /Function :/ {if (name) print f, name, n, stl, ldl, shfl, sel; name=$3; n=0; stl=0; ldl=0; shfl=0; sel=0}
    /^ +\/\*[0-9a-f]+\*\// {n++; if (/STL/) stl++; if (/LDL/) ldl++; if (/SHFL/) shfl++; if (/ SEL /) sel++}
    END {if (name) print f, name, n, stl, ldl, shfl, sel}' >>"$out/sass_counts.txt"
done
cuobjdump -sass build/tunex/obj/forward_sm80_hdim128_bf16_candidate5.cu.o >"$out/sass_d128_RPAEX.txt" 2>/dev/null
cuobjdump -sass build/tunex/obj/forward_sm80_hdim128_bf16.cu.o >"$out/sass_d128_table.txt" 2>/dev/null
stamp "sass"

wait $build_t
stamp "build T rc=$?"; grep -m5 -A6 " error" "$out/t_build.log"
tests=$tt/build/tests/flashattn_tests
timeout 50 "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$out/tests.txt" 2>&1
stamp "tests rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
grep -E 'FAILED' "$out/tests.txt" | head -20
left=$(( 262 - ($(date +%s) - t0) ))
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
