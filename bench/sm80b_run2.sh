#!/usr/bin/env bash
# Helper sm80b, session 8 (issue 4), device call 2: verifies the table of call 1's decision (d128 non-causal: J R A X
# at s <= 2048, R A X main entry; d64 causal heads-fastest row ends at 1k, 2k grouped):
#  1. background (nice 19): test build T = this tree with bench/sm80b_test_table.py's table (J R A X up to 200
#     queries so the suites reach both new kernels), d128 only, bf16 + fp16, sm_90 SASS only,
#     -DFLASHATTN_SM80_TEST_HEAD_GROUP=3, no backward;
#  2. Python extensions (cuda_sm80 only, bf16, sm_90 SASS, d64 + d128): O = the committed table of main 0f879a8
#     (old_table.json, carried beside the tree) and N = this tree's table; timed the compare.py way
#     (bench/sm80b_peers.py, FA2 in each process) in the order O, N, N, O on d128 non-causal 512..16k and d64
#     causal 1k/2k/4k;
#  3. T's cuda_sm80 forward/varlen/KV-cache suites, then racecheck and memcheck on small + 1023x1024 shapes.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80b-out
final="${OUT:-$PWD/sm80b-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'cp "$out/run.txt" "$final/" 2>/dev/null; tar -czf "$final/sm80b.tgz" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
gpu_state() { nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1; }
gpu_state
echo "tree $(cat TREE 2>/dev/null) nproc $(nproc)" >>"$out/run.txt"
filter="*Forward*cuda_sm80*:*Varlen*cuda_sm80*:*KVCache*cuda_sm80*"
sanitize="Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*:Grid/*cuda_sm80*_1023x1024_*:*CudaRobustness*"

copy_tree() {  # copy_tree DIR TABLE: this tree without builds, its sm80 gencode sm_90 only, TABLE as the table
  rm -rf "$1" && mkdir -p "$1" && tar --exclude='./build*' --exclude=./.git -cf - . | tar -C "$1" -xf -
  cp "$2" "$1/src/cuda/sm80/forward_tuning.json"
  sed -i 's/^set(FLASHATTN_SM80_GENCODE .*)$/set(FLASHATTN_SM80_GENCODE)/' "$1/src/cuda/CMakeLists.txt"
}
tt=/tmp/sm80b-T
python3 bench/sm80b_test_table.py src/cuda/sm80/forward_tuning.json /tmp/sm80b-test-table.json
copy_tree $tt /tmp/sm80b-test-table.json
(cmake -S $tt -B $tt/build -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_HEAD_DIMS="128" \
  -DFLASHATTN_DTYPES="bf16;fp16" -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF \
  -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF -DCMAKE_CUDA_FLAGS="-DFLASHATTN_SM80_TEST_HEAD_GROUP=3" \
  >"$out/t_configure.log" 2>&1 &&
  nice -n 19 timeout 190 cmake --build $tt/build --target flashattn_tests -j 16 >"$out/t_build.log" 2>&1) &
build_t=$!

build_ext() {  # build_ext NAME TABLE
  local tree=/tmp/sm80b-$1
  copy_tree "$tree" "$2"
  cmake -S "$tree" -B "$tree/build" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 \
    -DFLASHATTN_HEAD_DIMS="64;128" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF \
    -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=ON \
    -DPython_EXECUTABLE="$(command -v python3)" >"$out/ext_$1.configure.log" 2>&1 &&
    timeout 150 cmake --build "$tree/build" --target _C -j 16 >"$out/ext_$1.build.log" 2>&1 &&
    mkdir -p "$tree/pyroot" && cp -r "$tree/python/flashattn" "$tree/pyroot/" &&
    cp "$tree"/build/python/_C*.so "$tree/pyroot/flashattn/"
  echo "ext $1 rc=$?" >>"$out/run.txt"
}
build_ext O old_table.json & po=$!
build_ext N src/cuda/sm80/forward_tuning.json & pn=$!
wait $po $pn
stamp "extensions built: $(grep '^ext' "$out/run.txt" | tr '\n' ' ')"
rows="128:0:512,128:0:1024,128:0:2048,128:0:4096,128:0:8192,128:0:16384,64:1:1024,64:1:2048,64:1:4096"
peers() {  # peers NAME
  [[ -d /tmp/sm80b-$1/pyroot/flashattn ]] || { stamp "peers $1: no extension"; return; }
  PYTHONPATH=/tmp/sm80b-$1/pyroot timeout 40 python3 bench/sm80b_peers.py "$1" "$rows" >>"$out/peers.jsonl" \
    2>>"$out/peers_err.txt"
  stamp "peers $1 rc=$?"
}
peers O
peers N
peers N
peers O
gpu_state

wait $build_t
stamp "build T rc=$?"; grep -m5 -A6 " error" "$out/t_build.log"
tests=$tt/build/tests/flashattn_tests
left=$(( 240 - ($(date +%s) - t0) ))
timeout $(( left < 60 ? (left > 5 ? left : 5) : 60 )) "$tests" --gtest_filter="$filter" --gtest_brief=1 \
  >"$out/tests.txt" 2>&1
stamp "tests rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
grep -E 'FAILED' "$out/tests.txt" | head -20
left=$(( 240 - ($(date +%s) - t0) ))
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
python3 bench/sm80b_summary.py "$out" >"$out/summary.txt" 2>&1; cat "$out/summary.txt"
stamp done
