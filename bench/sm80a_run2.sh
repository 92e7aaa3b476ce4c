#!/usr/bin/env bash
# RECORD of device call 2 on tree 3164e54 (results: bench/sm80a_results.md, docs/kernel-notes.md v16). On a later tree
# the "new table" is that tree's (a23ccfc and later: the causal s <= 4096 row without X A).
# Session 8 (issue 4, helper sm80a), device call 2: verifies and measures the proposed table (this tree's
# forward_tuning.json: xor_lane_offsets + approx_epilogue on every d256 single-buffer row, causal s <= 512 / 1024 in
# the grouped order) against the old one (old_table.json, put beside the tree when it is copied: main 0f879a8's).
#  1. builds, in parallel: test build T (this table, d256, bf16 + fp16, sm_90, no backward,
#     -DFLASHATTN_SM80_TEST_HEAD_GROUP=3); the tuning harness (bench/sm80a_candidates2.json: the old and the new
#     kernel; the harness's "table" rows are the new table); Python extensions A (old table, package flashattn) and
#     B (new table, package flashattn_b), d256 bf16;
#  2. harness, two passes (>= 100 ms per timing): non-causal 512-2k, causal 512-4k (both orders + grouped);
#  3. bench/sm80a_methods.py: old (ours) / new (ours_b) table through compare.py's call beside FA2, timed as
#     compare.py now does (settle 200 ms) and as it did (no settle), two rounds in reversed order; the settle
#     check (1 s idle or 200 ms of cuDNN right before the timing, with and without the settle);
#  4. bench/compare.py as changed here (settle 200 ms), the new table as `flashattn`, d256 fwd s = 512 only
#     (a run of the script, not a measurement: the device time goes to 3 and 5);
#  5. T's cuda_sm80 forward/varlen/KV-cache suites, then racecheck and memcheck on the odd + 1023x1024 shapes.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80a-out2
final="${OUT:-$PWD/sm80a-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'cp "$out/run.txt" "$final/" 2>/dev/null; tar -czf "$final/sm80a2.tgz" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
gpu_state() { nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1; }
gpu_state
echo "tree $(cat TREE 2>/dev/null)" >>"$out/run.txt"
filter="*Forward*cuda_sm80*:*Varlen*cuda_sm80*:*KVCache*cuda_sm80*"
sanitize="Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*:Grid/*cuda_sm80*_1023x1024_*:*CudaRobustness*"

ta=/tmp/sm80a-treea
rm -rf "$ta" && mkdir -p "$ta" && tar --exclude='./build*' --exclude=./.git -cf - . | tar -C "$ta" -xf -
cp old_table.json "$ta/src/cuda/sm80/forward_tuning.json"
common_args="-DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_HEAD_DIMS=256 -DFLASHATTN_BACKWARD=OFF \
  -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF"
pyargs="$common_args -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_PYTHON=ON \
  -DPython_EXECUTABLE=$(command -v python3)"
build_ext() {  # SOURCE BUILD TAG
  # shellcheck disable=SC2086
  cmake -S "$1" -B "$2" -G Ninja $pyargs >"$out/$3_configure.log" 2>&1 &&
    timeout 200 cmake --build "$2" --target _C -j 10 >"$out/$3_build.log" 2>&1
}
stamp "builds"
# shellcheck disable=SC2086
(cmake -S . -B build/sm80a-t -G Ninja $common_args -DFLASHATTN_DTYPES="bf16;fp16" -DFLASHATTN_BUILD_TESTS=ON \
  -DFLASHATTN_BUILD_PYTHON=OFF -DCMAKE_CUDA_FLAGS="-DFLASHATTN_SM80_TEST_HEAD_GROUP=3" >"$out/t_configure.log" 2>&1 &&
  timeout 200 cmake --build build/sm80a-t --target flashattn_tests -j 12 >"$out/t_build.log" 2>&1) &
bt=$!
build_ext "$ta" "$ta/build" pa &
pa=$!
build_ext . build/sm80a-pb pb &
pb=$!
timeout 170 python3 tools/kernels/tune_forward.py --build-only --head-dims 256 --dtypes bf16 \
  --candidates bench/sm80a_candidates2.json --build build/sm80a-tune2 >"$out/tune_build.txt" 2>&1
stamp "tune build rc=$?"; tail -3 "$out/tune_build.txt"
for f in build/sm80a-tune2/obj/forward_sm80_hdim256*.ptxas.txt; do
  echo "## $(basename "$f")"; grep -E "Function properties|registers|spill" "$f" | sed 's/.*ForwardConfigILi//'
done >"$out/ptxas.txt" 2>/dev/null
bin=build/sm80a-tune2/sm80_tune
common="SM80_MIN_MS=100 SM80_NORMAL=1 SM80_BF16_ONLY=1 SM80_GENERAL_SEQLEN=0 SM80_DIMS=256"
pass() {
  env $common SM80_CAUSAL=0 SM80_ONE_ORDER=1 timeout 30 "$bin" 512,1024,2048 >"$out/rows_n_$1.jsonl" 2>&1
  stamp "pass $1 non-causal rc=$?"
  env $common SM80_CAUSAL=1 SM80_GROUP_FACTORS=2 timeout 40 "$bin" 512,1024,2048,4096 >"$out/rows_c_$1.jsonl" 2>&1
  stamp "pass $1 causal rc=$?"
}
pass 1
pass 2

wait $pa
stamp "ext A rc=$?"; grep -m5 -A6 " error" "$out/pa_build.log"
wait $pb
stamp "ext B rc=$?"; grep -m5 -A6 " error" "$out/pb_build.log"
py=build/sm80a-pyroot2
rm -rf "$py" && mkdir -p "$py" && cp -r python/flashattn "$py/" && cp "$ta"/build/python/_C*.so "$py/flashattn/"
cp -r python/flashattn "$py/flashattn_b" && cp build/sm80a-pb/python/_C*.so "$py/flashattn_b/" &&
  sed -i 's/"flashattn::/"flashattnb::/' "$py/flashattn_b/_ops.py"
PYTHONPATH=$PWD/$py timeout 75 python3 bench/sm80a_methods.py 2 --impls ours,ours_b,fa2 \
  --methods dobench,dobench0 --rows 0:512,0:1024,0:2048,1:512,1:1024,1:2048,1:4096 \
  --prelude-rows 0:512 >"$out/methods.jsonl" 2>"$out/methods.err"
stamp "methods rc=$?"; tail -3 "$out/methods.err"
# compare.py with the new table as `flashattn` (extension B under the package name compare.py imports).
pyc=build/sm80a-pyroot2c
rm -rf "$pyc" && mkdir -p "$pyc" && cp -r python/flashattn "$pyc/" && cp build/sm80a-pb/python/_C*.so "$pyc/flashattn/"
PYTHONPATH=$PWD/$pyc timeout 30 python3 bench/compare.py --modes fwd --hdims 256 --seqlens 512 \
  --rounds 2 --no-decode --out "$out" --tag sm80a2 >"$out/compare.txt" 2>&1
stamp "compare rc=$?"
gpu_state

wait $bt
stamp "build T rc=$?"; grep -m5 -A6 " error" "$out/t_build.log"
tests=build/sm80a-t/tests/flashattn_tests
left=$(( 240 - ($(date +%s) - t0) ))
timeout $(( left < 60 ? (left > 5 ? left : 5) : 60 )) "$tests" --gtest_filter="$filter" --gtest_brief=1 \
  >"$out/tests.txt" 2>&1
stamp "tests rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
grep -E 'FAILED' "$out/tests.txt" | head -20
left=$(( 245 - ($(date +%s) - t0) ))
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
