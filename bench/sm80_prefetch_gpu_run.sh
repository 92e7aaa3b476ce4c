#!/usr/bin/env bash
# One device call for the cuda_sm80 forward's prefetch_next work (session 3, issue 4):
#  1. build (sm_90, no backward) with the checked-in table; the cuda_sm80 forward suites + memcheck;
#  2. a second build whose table turns prefetch_next on for every shape, with a persistent grid of 3
#     CTAs (-DFLASHATTN_SM80_PERSISTENT_CTAS=3), so the suites' small problems run many tiles per CTA
#     through the prefetch path: the same suites + memcheck + racecheck (SM80_SKIP_PREFETCH_CHECK=1: skip);
#  3. the tuning sweep (tools/kernels/tune_forward.py; every candidate on the standard grid, bf16, its
#     output compared with the table kernel's; the table kernels on bf16 and fp16);
#  4. FA2 (SDPA FLASH_ATTENTION) on bf16 and fp16 in the same run.
# Everything under a work folder; the few files worth reading go to $OUT, the rest as logs.tgz.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
final="${OUT:-$PWD/sm80-gpu-out}"
out=/tmp/sm80c-out
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

stamp "build (checked-in table)"
cmake -S . -B build/gpu -G Ninja $cmake_common >"$out/configure.log" 2>&1
timeout 150 cmake --build build/gpu --target flashattn_tests -j 16 >"$out/build.log" 2>&1
stamp "build rc=$?"; grep -m5 -B2 -A6 "error" "$out/build.log"

pf_ok=0
if [[ -z "${SM80_SKIP_PREFETCH_CHECK:-}" ]]; then
  # The prefetch tree: this tree with every table shape (entries and defaults) switched to prefetch_next.
  rm -rf /tmp/pf && mkdir -p /tmp/pf && tar --exclude=./build --exclude=./.git -cf - . | tar -C /tmp/pf -xf -
  python3 - <<'EOF'
import json, pathlib
p = pathlib.Path("/tmp/pf/src/cuda/sm80/forward_tuning.json")
t = json.loads(p.read_text())
for e in t["entries"] + t["defaults"]:
    assert e["shape"]["stages"] == 2
    e["shape"]["prefetch_next"] = True
p.write_text(json.dumps(t, indent=2))
EOF
  (cmake -S /tmp/pf -B /tmp/pf/build -G Ninja $cmake_common -DCMAKE_CUDA_FLAGS="-DFLASHATTN_SM80_PERSISTENT_CTAS=3" \
     >"$out/pf_configure.log" 2>&1 &&
   timeout 200 cmake --build /tmp/pf/build --target flashattn_tests -j 16 >"$out/pf_build.log" 2>&1) &
  pf_build=$!
fi

tests=build/gpu/tests/flashattn_tests
if [[ -x $tests ]]; then
  timeout 120 "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$out/tests.txt" 2>&1
  stamp "tests rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests.txt" | head -20
  timeout 90 compute-sanitizer --tool memcheck --error-exitcode 3 "$tests" --gtest_filter="$sanitize" \
    --gtest_brief=1 >"$out/memcheck.txt" 2>&1
  stamp "memcheck rc=$? $(grep -m1 'ERROR SUMMARY' "$out/memcheck.txt") $(tail -1 "$out/memcheck.txt")"
fi

if [[ -z "${SM80_SKIP_PREFETCH_CHECK:-}" ]]; then
  wait $pf_build
  stamp "prefetch build rc=$?"; grep -m5 -B2 -A6 "error" "$out/pf_build.log"
  pft=/tmp/pf/build/tests/flashattn_tests
  if [[ -x $pft ]]; then
    timeout 120 "$pft" --gtest_filter="$filter" --gtest_brief=1 >"$out/pf_tests.txt" 2>&1
    stamp "prefetch tests rc=$? $(tail -3 "$out/pf_tests.txt" | tr '\n' ' ')"
    grep -E 'FAILED' "$out/pf_tests.txt" | head -20
    for tool in memcheck racecheck; do
      timeout 90 compute-sanitizer --tool $tool --error-exitcode 3 "$pft" --gtest_filter="$sanitize" \
        --gtest_brief=1 >"$out/pf_$tool.txt" 2>&1
      stamp "prefetch $tool rc=$? $(grep -m1 'ERROR SUMMARY' "$out/pf_$tool.txt") $(tail -1 "$out/pf_$tool.txt")"
    done
  fi
fi

stamp "tuning sweep"
cp src/cuda/sm80/forward_tuning.json "$out/forward_tuning.before.json"
timeout ${SM80_TUNE_TIMEOUT:-170} python3 tools/kernels/tune_forward.py --seqlens "${SM80_SEQLENS:-512,1024,2048,4096,8192,16384}" \
  --build build/tune >"$out/tune.txt" 2>&1
stamp "tune rc=$?"; grep -v '^{' "$out/tune.txt" | head -30
cp src/cuda/sm80/forward_tuning.json "$out/forward_tuning.json"
cp build/tune/tune_rows.jsonl "$out/" 2>/dev/null
cat build/tune/obj/*.ptxas.txt 2>/dev/null | grep -E "Compiling|registers|spill" | sed 's/.*ForwardConfigILi//' >"$out/ptxas.txt"

stamp "FA2 bf16, fp16"
timeout 60 python3 bench/sdpa_fa2_forward.py 64,128,256 2048 bf16 >"$out/fa2.jsonl" 2>&1
stamp "fa2 bf16 rc=$?"
timeout 60 python3 bench/sdpa_fa2_forward.py 64,128,256 0 fp16 >"$out/fa2_fp16.jsonl" 2>&1
stamp "fa2 fp16 rc=$?"
python3 bench/compare_fa2.py --tune "$out/tune_rows.jsonl" --table "$out/forward_tuning.json" "$out/fa2.jsonl" \
  "$out/fa2_fp16.jsonl" >"$out/compare.md" 2>&1
stamp done
tar -czf "$final/sm80c.tgz" -C "$out" .
cp "$out/run.txt" "$final/"
