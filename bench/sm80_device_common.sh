# Sourced by the one-call cuda_sm80 forward device scripts (bench/sm80_{short,general,prefetch}_gpu_run.sh):
# the work folder, a timestamped log, the GPU and torch versions, the test build (sm_90 SASS of the sm80
# kernels, no backward) and the cuda_sm80 forward suites with compute-sanitizer. Each script then adds its
# own measurements. Set `out` (the work folder) before sourcing; results go to $OUT (or ./sm80-gpu-out).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
final="${OUT:-$PWD/sm80-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
python3 -c "import torch; print('torch', torch.__version__)" >>"$out/run.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>"$out/run.txt" 2>&1
filter="${SM80_TEST_FILTER:-*Forward*cuda_sm80*:*Varlen*cuda_sm80*:*KVCache*cuda_sm80*:*Combine*cuda_sm80*:*CudaRobustness*:*Determinism*cuda_sm80*}"
sanitize="Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*"
cmake_common="-DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_CLI=OFF \
  -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF"

# build_tests SOURCE BUILD LOG_PREFIX [cmake args...]: configure and build flashattn_tests.
build_tests() {
  local src=$1 build=$2 prefix=$3
  shift 3
  # shellcheck disable=SC2086  # cmake_common is a list of arguments
  cmake -S "$src" -B "$build" -G Ninja $cmake_common "$@" >"$out/${prefix}configure.log" 2>&1 &&
    timeout 200 cmake --build "$build" --target flashattn_tests -j 16 >"$out/${prefix}build.log" 2>&1
}

# run_suites TESTS LOG_PREFIX TOOL...: the forward suites, then each compute-sanitizer tool on the odd shapes.
run_suites() {
  local tests=$1 prefix=$2
  shift 2
  [[ -x $tests ]] || { stamp "${prefix}tests: $tests was not built"; return 1; }
  timeout 120 "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$out/${prefix}tests.txt" 2>&1
  stamp "${prefix}tests rc=$? $(tail -3 "$out/${prefix}tests.txt" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/${prefix}tests.txt" | head -20
  local tool
  for tool in "$@"; do
    timeout 90 compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$sanitize" \
      --gtest_brief=1 >"$out/${prefix}$tool.txt" 2>&1
    stamp "${prefix}$tool rc=$? $(grep -m1 'SUMMARY' "$out/${prefix}$tool.txt") $(tail -1 "$out/${prefix}$tool.txt")"
  done
}

# tune_build_background CANDIDATES_JSON: compiles the tuning harness (bench/sm80_tune) beside the tests;
# `wait $tune_build` before using $tune_bin.
tune_build_background() {
  (timeout 150 python3 tools/kernels/tune_forward.py --build-only --candidates "$1" --build build/tune \
    >"$out/tune_build.txt" 2>&1) &
  tune_build=$!
  tune_bin=build/tune/sm80_tune
}

# record_ptxas: registers and spills of the tuning harness's kernels.
record_ptxas() {
  cat build/tune/obj/*.ptxas.txt 2>/dev/null | grep -E "Compiling|registers|spill" | sed 's/.*ForwardConfigILi//' \
    >"$out/ptxas.txt"
}

# tune_rows BIN SEQLENS LIMIT: bench/sm80_tune's rows for d 128, 256 and 64 (each under LIMIT seconds;
# softcap/ALiBi/dropout rows at s 512 and 2048) into $out/rows.jsonl.
tune_rows() {
  local bin=$1 seqlens=$2 limit=$3 d
  for d in 128 256 64; do
    SM80_DIMS=$d SM80_GENERAL_SEQLEN=512,2048 timeout "$limit" "$bin" "$seqlens" >"$out/rows_d$d.jsonl" 2>&1
    stamp "rows d$d rc=$?"
  done
  cat "$out"/rows_d*.jsonl >"$out/rows.jsonl"
}
