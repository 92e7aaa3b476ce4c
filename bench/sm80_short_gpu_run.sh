#!/usr/bin/env bash
# One device call for the cuda_sm80 forward at short sequences (session 3, issue 4):
#  1. build (sm_90, no backward) with the checked-in table; the cuda_sm80 forward suites, memcheck and
#     racecheck on the grid's odd shapes;
#  2. every table row on the standard grid (bench/sm80_tune with SM80_NO_CANDIDATES: cuda_sm80::run on
#     bf16 and fp16, the softcap/ALiBi/dropout kernels at s = 2048), FA2 bf16 and fp16 in the same run;
#  3. the per-query-tile fixed cost: ours and FA2 at seqlen_q 512 with 64..512 keys (non-causal);
#  4. ncu (a few sections) of ours and FA2 on d128 and d256, s = 512, non-causal.
# Everything under a work folder; the few files worth reading go to $OUT, the rest as one tarball.
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
filter="*Forward*cuda_sm80*:*Varlen*cuda_sm80*:*KVCache*cuda_sm80*:*Combine*cuda_sm80*:*CudaRobustness*:*Determinism*cuda_sm80*"
sanitize="Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*"

stamp "build (checked-in table)"
cmake -S . -B build/gpu -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_BACKWARD=OFF \
  -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_EXAMPLES=OFF >"$out/configure.log" 2>&1
timeout 150 cmake --build build/gpu --target flashattn_tests -j 16 >"$out/build.log" 2>&1
stamp "build rc=$?"; grep -m5 -A6 " error" "$out/build.log"
# The tuning harness (candidates compiled but not timed) builds beside the tests.
echo "[]" >/tmp/no_candidates.json
(timeout 150 python3 tools/kernels/tune_forward.py --build-only --candidates /tmp/no_candidates.json --build build/tune \
  >"$out/tune_build.txt" 2>&1) &
tune_build=$!

tests=build/gpu/tests/flashattn_tests
if [[ -x $tests ]]; then
  timeout 90 "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$out/tests.txt" 2>&1
  stamp "tests rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests.txt" | head -20
  for tool in memcheck racecheck; do
    timeout 90 compute-sanitizer --tool $tool --error-exitcode 3 "$tests" --gtest_filter="$sanitize" \
      --gtest_brief=1 >"$out/$tool.txt" 2>&1
    stamp "$tool rc=$? $(grep -m1 'SUMMARY' "$out/$tool.txt") $(tail -1 "$out/$tool.txt")"
  done
fi
wait $tune_build
stamp "tune build rc=$?"
bin=build/tune/sm80_tune
cat build/tune/obj/*.ptxas.txt 2>/dev/null | grep -E "Compiling|registers|spill" | sed 's/.*ForwardConfigILi//' >"$out/ptxas.txt"

stamp "table rows"
SM80_NO_CANDIDATES=1 timeout 90 "$bin" 512,1024,2048,4096,8192,16384 >"$out/table_rows.jsonl" 2>&1
stamp "table rows rc=$?"
timeout 45 python3 bench/sdpa_fa2_forward.py 64,128,256 2048 bf16 >"$out/fa2.jsonl" 2>&1
stamp "fa2 bf16 rc=$?"
timeout 40 python3 bench/sdpa_fa2_forward.py 64,128,256 0 fp16 >"$out/fa2_fp16.jsonl" 2>&1
stamp "fa2 fp16 rc=$?"
python3 bench/compare_fa2.py --tune "$out/table_rows.jsonl" --table src/cuda/sm80/forward_tuning.json \
  "$out/fa2.jsonl" "$out/fa2_fp16.jsonl" >"$out/compare.md" 2>&1

stamp "fixed cost"
for keys in 64 128 256; do
  SM80_TABLE_ONLY=1 SM80_CAUSAL=0 SM80_SEQLEN_K=$keys timeout 20 "$bin" 512 >>"$out/fixed_ours.jsonl" 2>&1
done
timeout 40 python3 bench/sm80_fa2_fixed_cost.py 64,128,256 512 64,128,256,512 >"$out/fixed_fa2.jsonl" 2>&1
stamp "fixed cost rc=$?"

stamp "ncu"
sections="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
  --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis"
for d in 128 256; do
  SM80_DIMS=$d SM80_TABLE_ONLY=1 SM80_CAUSAL=0 timeout 40 ncu $sections -k regex:forward_kernel --launch-skip 3 \
    --launch-count 1 "$bin" 512 >"$out/ncu_ours_d$d.txt" 2>&1
  FA2_PROFILE=1 timeout 40 ncu $sections -k regex:flash_fwd --launch-skip 2 --launch-count 1 \
    python3 bench/sm80_fa2_fixed_cost.py $d 512 512 >"$out/ncu_fa2_d$d.txt" 2>&1
  stamp "ncu d$d rc=$?"
done
stamp done
tar -czf "$final/sm80c.tgz" -C "$out" .
cp "$out/run.txt" "$out/compare.md" "$final/" 2>/dev/null
