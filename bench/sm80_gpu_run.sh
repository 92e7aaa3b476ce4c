#!/usr/bin/env bash
# One device call for the cuda_sm80 forward work (issue 4): build + GPU suites
# (scripts/gpu_check.sh), compute-sanitizer memcheck on the robustness tests,
# the tuning sweep (tools/kernels/tune_forward.py, which also gives our TFLOP/s
# of every candidate on the standard grid) and FA2 through PyTorch SDPA in the
# same run. Results under $OUT.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${OUT:-$PWD/sm80-gpu-out}"
mkdir -p "$out"
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
python3 -c "import torch; print('torch', torch.__version__)" >>"$out/run.txt" 2>&1

stamp "build + GPU suites"
FLASHATTN_GPU_STEPS="build tests" FLASHATTN_CMAKE_ARGS="-DFLASHATTN_CUDA_ARCHS=90 ${SM80_CMAKE_ARGS:-}" \
  OUT="$out/check" timeout 330 scripts/gpu_check.sh >"$out/gpu_check.txt" 2>&1
stamp "gpu_check rc=$?"; tail -25 "$out/gpu_check.txt"
tests=build/gpu/tests/flashattn_tests
if [[ -x $tests ]]; then
  timeout 90 compute-sanitizer --tool memcheck --error-exitcode 3 "$tests" --gtest_filter='*CudaRobustness*' \
    --gtest_brief=1 >"$out/memcheck_robustness.txt" 2>&1
  stamp "memcheck robustness rc=$? $(grep -m1 'ERROR SUMMARY' "$out/memcheck_robustness.txt")"
  tail -8 "$out/memcheck_robustness.txt"
fi

stamp "tuning sweep"
cp src/cuda/sm80/forward_tuning.json "$out/forward_tuning.before.json"
timeout 300 python3 tools/kernels/tune_forward.py --seqlens "${SM80_SEQLENS:-512,1024,2048,4096,8192,16384}" \
  --build build/tune >"$out/tune.txt" 2>&1
stamp "tune rc=$?"; cat "$out/tune.txt" | grep -v '^{' | head -60
cp src/cuda/sm80/forward_tuning.json "$out/forward_tuning.json"
cp build/tune/tune_rows.jsonl "$out/" 2>/dev/null
cat build/tune/obj/*.ptxas.txt 2>/dev/null | grep -E "Compiling|registers|spill" | sed 's/.*ForwardConfigILi//' >"$out/ptxas.txt"

stamp "FA2 (SDPA FLASH_ATTENTION)"
timeout 150 python3 bench/sdpa_fa2_forward.py >"$out/fa2.jsonl" 2>&1
stamp "fa2 rc=$?"
python3 bench/compare_fa2.py --tune "$out/tune_rows.jsonl" --table "$out/forward_tuning.json" "$out/fa2.jsonl" \
  | tee "$out/compare.md"
stamp done
