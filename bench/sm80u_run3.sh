#!/usr/bin/env bash
# RECORD of one device call (2026-11-22, integrator, commit 1dbb935): it passed (73 sm80 suite tests, racecheck and
# memcheck clean) and the proposed table became src/cuda/sm80/forward_tuning.json in a8f9d00, so the proposal file
# was removed. To rerun it, check out 1dbb935.
# Session 6 (issue 4, helper sm80u): the verification device call of the proposed table
# (tools/kernels/sm80u_proposed_forward_tuning.json: the d64 non-causal main entry with whole_tile_loads +
# late_copies, the d64 non-causal joint-softmax row limited to s <= 512), which helper sm80u measured
# (bench/sm80u_run2.sh) but could not run through the suites within its two device calls.
# For the integrator: one call, ~100 s. If the suites pass and the sanitizers are clean, adopt with
#   cp tools/kernels/sm80u_proposed_forward_tuning.json src/cuda/sm80/forward_tuning.json
#  1. test build P = this tree with the proposed table (bf16 + fp16, d64/128/256, sm_90, no backward) in the
#     background, and the tuning harness from the proposed table (candidates: the d64 shapes of the current table
#     and the new one, tools/kernels/sm80u_candidates3.json);
#  2. the harness's d64 rows with every timing over >= 100 ms like do_bench (SM80_MIN_MS=100; table = proposed,
#     fp16 table rows included; causal rows: the table's shape against the whole_tile_loads + late_copies
#     candidate, for the next step), FA2 on compare.py's tensors; summary.txt sets them side by side;
#  3. build P's cuda_sm80 forward/varlen/KV-cache/combine/robustness/determinism suites, racecheck and memcheck.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80u-out3
final="${OUT:-$PWD/sm80u-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'tar -czf "$final/sm80u3.tgz" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv,noheader >>"$out/run.txt" 2>&1
filter="*Forward*cuda_sm80*:*Varlen*cuda_sm80*:*KVCache*cuda_sm80*:*Combine*cuda_sm80*:*CudaRobustness*:*Determinism*cuda_sm80*"
sanitize="Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*:*CudaRobustness*"
proposed=tools/kernels/sm80u_proposed_forward_tuning.json

src_p=/tmp/sm80u-srcP
rm -rf "$src_p" && mkdir -p "$src_p"
tar --exclude='./build*' -cf - . | tar -C "$src_p" -xf -
cp "$proposed" "$src_p/src/cuda/sm80/forward_tuning.json"
(cmake -S "$src_p" -B build/testP -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 \
  -DFLASHATTN_HEAD_DIMS="64;128;256" -DFLASHATTN_DTYPES="bf16;fp16" -DFLASHATTN_BACKWARD=OFF \
  -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
  -DFLASHATTN_PTXAS_VERBOSE=ON >"$out/p_configure.log" 2>&1 &&
  nice -n 19 timeout 170 cmake --build build/testP --target flashattn_tests -j 16 >"$out/p_build.log" 2>&1) &
build_p=$!

stamp "tune build"
timeout 120 python3 tools/kernels/tune_forward.py --build-only --head-dims "64" --dtypes "bf16;fp16" \
  --table "$proposed" --candidates tools/kernels/sm80u_candidates3.json --build build/tune3 >"$out/tune_build.txt" 2>&1
stamp "tune build rc=$?"; tail -3 "$out/tune_build.txt"
cat build/tune3/obj/*.ptxas.txt 2>/dev/null | grep -E "Compiling|registers|spill" | sed 's/.*ForwardConfigILi//' \
  >"$out/ptxas.txt"
SM80_MIN_MS=100 SM80_NORMAL=1 SM80_ONE_ORDER=1 SM80_GENERAL_SEQLEN=2048 SM80_DIMS=64 timeout 75 build/tune3/sm80_tune \
  512,1024,2048,4096,8192,16384 >"$out/rows_d64.jsonl" 2>&1
stamp "rows d64 rc=$?"
timeout 30 python3 bench/sm80u_peers.py 64 >"$out/fa2.jsonl" 2>&1
stamp "fa2 rc=$?"
python3 bench/sm80u_table.py "$out/rows_d64.jsonl" --fa2 "$out/fa2.jsonl" | tee "$out/summary.txt"

wait $build_p
stamp "build P rc=$?"; grep -m5 -A6 " error" "$out/p_build.log"
tests=build/testP/tests/flashattn_tests
timeout 90 "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$out/tests.txt" 2>&1
stamp "tests rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
grep -E 'FAILED' "$out/tests.txt" | head -20
for tool in racecheck memcheck; do
  timeout 60 compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$sanitize" \
    --gtest_brief=1 >"$out/$tool.txt" 2>&1
  stamp "$tool rc=$? $(grep -m1 'SUMMARY' "$out/$tool.txt") $(tail -1 "$out/$tool.txt")"
done
stamp done
cp "$out/run.txt" "$final/" 2>/dev/null
