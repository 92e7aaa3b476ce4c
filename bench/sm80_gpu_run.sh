#!/usr/bin/env bash
# One device call for the cuda_sm80 forward work (issue 4): build (scripts/gpu_check.sh,
# sm_90 only, no backward) + the cuda_sm80 forward suites, compute-sanitizer memcheck
# (SM80_MEMCHECK_FILTER, default the 113x203 / 128x217 grid cases and the robustness tests),
# the tuning sweep (tools/kernels/tune_forward.py, which also gives our TFLOP/s
# of every candidate on the standard grid) and FA2 through PyTorch SDPA in the
# same run. Results in a work folder; the few files worth reading go to $OUT
# (the device tool returns at most 8), the rest as logs.tgz.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
final="${OUT:-$PWD/sm80-gpu-out}"
out=$(mktemp -d)
mkdir -p "$final"
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
python3 -c "import torch; print('torch', torch.__version__)" >>"$out/run.txt" 2>&1

stamp "build + cuda_sm80 forward suites"
FLASHATTN_GPU_STEPS="build" FLASHATTN_CMAKE_ARGS="-DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_BACKWARD=OFF \
  -DFLASHATTN_BUILD_CLI=OFF ${SM80_CMAKE_ARGS:-}" OUT="$out/check" timeout 330 scripts/gpu_check.sh \
  >"$out/gpu_check.txt" 2>&1
stamp "build rc=$?"; tail -5 "$out/gpu_check.txt"
tests=build/gpu/tests/flashattn_tests
filter="${SM80_TEST_FILTER:-*Forward*cuda_sm80*:*Varlen*cuda_sm80*:*KVCache*cuda_sm80*:*Combine*cuda_sm80*:*CudaRobustness*:*Determinism*cuda_sm80*}"
if [[ -x $tests ]]; then
  timeout 200 "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$out/tests.txt" 2>&1
  stamp "tests rc=$? $(grep -cE '^\[       OK|^\[  PASSED' "$out/tests.txt") $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests.txt" | head -20
  timeout 180 compute-sanitizer --tool memcheck --error-exitcode 3 "$tests" \
    --gtest_filter="${SM80_MEMCHECK_FILTER:-Grid/*cuda_sm80_*_113x203_*:Grid/*cuda_sm80_*_128x217_*:*CudaRobustness*}" --gtest_brief=1 >"$out/memcheck.txt" 2>&1
  stamp "memcheck rc=$? $(grep -m1 'ERROR SUMMARY' "$out/memcheck.txt") $(tail -2 "$out/memcheck.txt" | tr '\n' ' ')"
fi

stamp "tuning sweep"
cp src/cuda/sm80/forward_tuning.json "$out/forward_tuning.before.json"
timeout ${SM80_TUNE_TIMEOUT:-240} python3 tools/kernels/tune_forward.py --seqlens "${SM80_SEQLENS:-512,1024,2048,4096,8192,16384}" \
  --build build/tune >"$out/tune.txt" 2>&1
stamp "tune rc=$?"; grep -v '^{' "$out/tune.txt" | head -40
cp src/cuda/sm80/forward_tuning.json "$out/forward_tuning.json"
cp build/tune/tune_rows.jsonl "$out/" 2>/dev/null
cat build/tune/obj/*.ptxas.txt 2>/dev/null | grep -E "Compiling|registers|spill" | sed 's/.*ForwardConfigILi//' >"$out/ptxas.txt"

stamp "FA2 (SDPA FLASH_ATTENTION)"
timeout 150 python3 bench/sdpa_fa2_forward.py >"$out/fa2.jsonl" 2>&1
stamp "fa2 rc=$?"
# A second FA2 pass: the run-to-run spread of the peer, for judging small ratios.
timeout 150 python3 bench/sdpa_fa2_forward.py >"$out/fa2_second.jsonl" 2>&1
stamp "fa2 (second pass) rc=$?"
python3 bench/compare_fa2.py --tune "$out/tune_rows.jsonl" --table "$out/forward_tuning.json" "$out/fa2.jsonl" \
  | tee "$out/compare.md"
stamp done
cp "$out"/{run.txt,compare.md,tune_rows.jsonl,fa2.jsonl,forward_tuning.json,ptxas.txt,tests.txt} "$final"/ 2>/dev/null
tar -czf "$final/logs.tgz" -C "$out" .
