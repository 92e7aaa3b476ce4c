#!/usr/bin/env bash
# RECORD of the device call on tree 785fce9 (results: bench/sm80y_results.md, docs/kernel-notes.md v15); run on a
# later tree, its "table" control is that tree's table (0ba8cee adopted J R A X on the d64 rows).
# Session 7 (issue 4, helper sm80y), the one device call: TileShape::xor_lane_offsets (X: the ldmatrix addresses
# of Q/K/V from one per-lane register per operand, smem_layout.h LaneOffsets::address) on the d64 table kernels,
# against the same shapes without it, FA2 in the same call. After bench/sm80x_run.sh:
#  1. background (nice 19): test build T = this tree with bench/sm80y_test_table.py's table (X on every d64 row
#     that is not kGeneral), d64 only, bf16 + fp16, sm_90, no backward, -DFLASHATTN_SM80_TEST_HEAD_GROUP=3;
#  2. the tuning harness with bench/sm80y_candidates.json (the four d64 table shapes J R A, W L, W L A, plain,
#     each with and without X), every timing >= 100 ms; "table" / "table_100ms" / "table_end" = the committed
#     table (the control, three readings); d64 non-causal s = 512/1k/2k/8k, causal 512/1k/2k/4k (heads fastest
#     and grouped, factor 2); two passes;
#  3. FA2 on compare.py's tensors between the passes (bench/sm80u_peers.py);
#  4. spill/instruction counts from the tuning objects' SASS (cuobjdump) and ptxas -v;
#  5. T's cuda_sm80 forward/varlen/KV-cache suites, then racecheck and memcheck on small + 1023x1024 shapes.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80y-out
final="${OUT:-$PWD/sm80y-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'cp "$out/run.txt" "$final/" 2>/dev/null; tar -czf "$final/sm80y.tgz" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
gpu_state() { nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1; }
gpu_state
echo "tree $(cat TREE 2>/dev/null)" >>"$out/run.txt"  # TREE: written when the tree is copied for the call
filter="*Forward*cuda_sm80*:*Varlen*cuda_sm80*:*KVCache*cuda_sm80*"
sanitize="Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*:Grid/*cuda_sm80*_1023x1024_*:*CudaRobustness*"

tt=/tmp/sm80y-testtree
rm -rf "$tt" && mkdir -p "$tt" && tar --exclude='./build*' --exclude=./.git -cf - . | tar -C "$tt" -xf -
python3 bench/sm80y_test_table.py src/cuda/sm80/forward_tuning.json "$tt/src/cuda/sm80/forward_tuning.json"
(cmake -S "$tt" -B "$tt/build" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 \
  -DFLASHATTN_HEAD_DIMS="64" -DFLASHATTN_DTYPES="bf16;fp16" -DFLASHATTN_BACKWARD=OFF \
  -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
  -DCMAKE_CUDA_FLAGS="-DFLASHATTN_SM80_TEST_HEAD_GROUP=3" >"$out/t_configure.log" 2>&1 &&
  nice -n 19 timeout 150 cmake --build "$tt/build" --target flashattn_tests -j 16 >"$out/t_build.log" 2>&1) &
build_t=$!

stamp "tune build"
timeout 100 python3 tools/kernels/tune_forward.py --build-only --head-dims "64" --dtypes bf16 \
  --candidates bench/sm80y_candidates.json --build build/tuney >"$out/tune_build.txt" 2>&1
stamp "tune build rc=$?"; tail -3 "$out/tune_build.txt"
for f in build/tuney/obj/forward_sm80_hdim64*.ptxas.txt; do
  echo "## $(basename "$f")"; grep -E "Function properties|registers|spill" "$f" | sed 's/.*ForwardConfigILi//'
done >"$out/ptxas.txt" 2>/dev/null
common="SM80_MIN_MS=100 SM80_NORMAL=1 SM80_ONE_ORDER=1 SM80_BF16_ONLY=1 SM80_GENERAL_SEQLEN=0 SM80_DIMS=64"
pass() {
  env $common SM80_CAUSAL=0 timeout 40 build/tuney/sm80_tune 512,1024,2048,8192 >"$out/rows_n_$1.jsonl" 2>&1
  stamp "pass $1 non-causal rc=$?"
  env $common SM80_CAUSAL=1 SM80_GROUP_FACTORS=2 timeout 50 build/tuney/sm80_tune 512,1024,2048,4096 \
    >"$out/rows_c_$1.jsonl" 2>&1
  stamp "pass $1 causal rc=$?"
}
pass 1
timeout 30 python3 bench/sm80u_peers.py 64 512,1024,2048,4096,8192 0,1 >"$out/fa2.jsonl" 2>&1
stamp "fa2 rc=$?"
pass 2
gpu_state
for n in 1 2; do
  python3 bench/sm80y_table.py "$out"/rows_n_$n.jsonl "$out"/rows_c_$n.jsonl --fa2 "$out/fa2.jsonl" \
    >"$out/summary_$n.txt" 2>&1
  cat "$out/summary_$n.txt"
done
# Static SASS counts per kernel: instructions, STL, LDL (the K/V loop's spill reloads are what X removes).
for o in build/tuney/obj/forward_sm80_hdim64_bf16*.cu.o; do
  cuobjdump -sass "$o" 2>/dev/null | awk -v f="$(basename "$o")" '
    /Function :/ {if (name) print f, name, n, stl, ldl; name=$3; n=0; stl=0; ldl=0}
    /^ +\/\*[0-9a-f]+\*\// {n++; if (/STL/) stl++; if (/LDL/) ldl++}
    END {if (name) print f, name, n, stl, ldl}' >>"$out/sass_counts.txt"
done
stamp "sass"

wait $build_t
stamp "build T rc=$?"; grep -m5 -A6 " error" "$out/t_build.log"
tests=$tt/build/tests/flashattn_tests
left=$(( 236 - ($(date +%s) - t0) ))
timeout $(( left < 50 ? (left > 5 ? left : 5) : 50 )) "$tests" --gtest_filter="$filter" --gtest_brief=1 \
  >"$out/tests.txt" 2>&1
stamp "tests rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
grep -E 'FAILED' "$out/tests.txt" | head -20
left=$(( 236 - ($(date +%s) - t0) ))
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
