#!/usr/bin/env bash
# RECORD of device call 2 on tree b83ee8b (dense_kv_only, since taken back out; results:
# bench/sm80d_results.md, docs/kernel-notes.md v18). Runs only on that tree.
# Helper sm80d, session 9 (issue 4), device call 2: dense_kv_only (D) on the d256 rows, measured and verified.
#  1. builds, in parallel: Python extensions (cuda_sm80 only, bf16, sm_90 SASS; bench/sm80d_table2.py):
#     A = the committed table (kGeneral rows left out), d64 + d256; D1 = A + D on the d256 X A rows, whose
#     kernel the causal s <= 4096 row takes too; D2 = A + D on the X A rows and on the causal s <= 4096 row's
#     own kernel (d256 only); packages flashattn / flashattn_d1 / flashattn_d2 (torch ops renamed);
#     the test build (flashattn_tests, d64/128/256, bf16, the table with D on every d256 row: "test").
#  2. bench/sm80d_peers.py: A, D1, D2, FA2, A again per round, 4 rounds, order reversing, 200 ms settle;
#  3. the sm80 forward suites, racecheck + memcheck on the odd shapes, 1023x1024 and CudaRobustness.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80d-out2
final="${OUT:-$PWD/sm80d-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'cp "$out/run.txt" "$final/" 2>/dev/null; tar -czf "$final/sm80d2.tgz" --exclude="*.ncu-rep" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
gpu_state() { nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1; }
gpu_state
echo "tree $(cat TREE 2>/dev/null) nproc $(nproc)" >>"$out/run.txt"

copy_tree() {  # DEST VARIANT
  rm -rf "$1" && mkdir -p "$1" && tar --exclude='./build*' --exclude=./.git -cf - . | tar -C "$1" -xf -
  python3 bench/sm80d_table2.py src/cuda/sm80/forward_tuning.json "$1/src/cuda/sm80/forward_tuning.json" "$2"
}
build_ext() {  # NAME HEAD_DIMS VARIANT
  local name=$1 dims=$2 tree=/tmp/sm80d-$1
  copy_tree "$tree" "$3"
  sed -i 's/^set(FLASHATTN_SM80_GENCODE .*)$/set(FLASHATTN_SM80_GENCODE)/' "$tree/src/cuda/CMakeLists.txt"
  cmake -S "$tree" -B "$tree/build" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 \
    -DFLASHATTN_HEAD_DIMS="$dims" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
    -DFLASHATTN_BUILD_PYTHON=ON -DFLASHATTN_PTXAS_VERBOSE=ON -DPython_EXECUTABLE="$(command -v python3)" \
    >"$out/ext_$name.configure.log" 2>&1 &&
    timeout 170 cmake --build "$tree/build" --target _C -j 6 >"$out/ext_$name.build.log" 2>&1
  echo "ext $name rc=$? at $(( $(date +%s) - t0 )) s" >>"$out/run.txt"
}
build_tests() {
  local tree=/tmp/sm80d-T
  copy_tree "$tree" test
  cmake -S "$tree" -B "$tree/build" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 \
    -DFLASHATTN_HEAD_DIMS="64;128;256" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
    -DFLASHATTN_BUILD_PYTHON=OFF >"$out/tests.configure.log" 2>&1 &&
    timeout 190 cmake --build "$tree/build" --target flashattn_tests -j 8 >"$out/tests.build.log" 2>&1
  echo "tests build rc=$? at $(( $(date +%s) - t0 )) s" >>"$out/run.txt"
}
stamp "builds"
build_ext A "64;256" base & pa=$!
build_ext D1 "256" d1 & pd1=$!
build_ext D2 "256" d2 & pd2=$!
build_tests & pt=$!
wait $pa $pd1 $pd2
stamp "extensions: $(grep '^ext' "$out/run.txt" | tr '\n' ' ')"
for n in A D1 D2; do
  grep -m3 -B2 -A8 " error" "$out/ext_$n.build.log" | head -30
  grep -E "Compiling entry|registers|spill" "$out/ext_$n.build.log" | sed 's/.*ForwardConfigILi//' >"$out/ptxas_$n.txt"
done
py=/tmp/sm80d-pyroot2
rm -rf "$py" && mkdir -p "$py" && cp -r python/flashattn "$py/" && cp /tmp/sm80d-A/build/python/_C*.so "$py/flashattn/"
for n in d1 d2; do
  N=${n^^}
  cp -r python/flashattn "$py/flashattn_$n" && cp /tmp/sm80d-$N/build/python/_C*.so "$py/flashattn_$n/" &&
    sed -i "s/\"flashattn::/\"flashattn$n::/" "$py/flashattn_$n/_ops.py"
done
wait $pt
stamp "$(grep '^tests build' "$out/run.txt")"; grep -m3 -B2 -A8 " error" "$out/tests.build.log" | head -30
gpu_state
rows="256:0:512,256:1:2048,256:0:1024,256:1:1024,256:1:512,256:0:2048,256:1:4096,64:1:1024,64:1:512,64:1:2048"
deadline=$(( t0 + 175 ))
left=$(( deadline + 12 - $(date +%s) )); (( left < 20 )) && left=20
SM80D_OTHERS=d1,d2 PYTHONPATH=$py timeout $left python3 bench/sm80d_peers.py 4 "$rows" "$deadline" \
  >"$out/peers.jsonl" 2>"$out/peers_err.txt"
stamp "peers rc=$?"; tail -3 "$out/peers_err.txt"
gpu_state
tests=/tmp/sm80d-T/build/tests/flashattn_tests
filter="*Forward*cuda_sm80*:*Varlen*cuda_sm80*:*KVCache*cuda_sm80*:*Combine*cuda_sm80*:*CudaRobustness*:*Determinism*cuda_sm80*"
sanitize="Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*:Grid/*cuda_sm80*_1023x1024_*:*CudaRobustness*"
if [[ -x $tests ]]; then
  timeout 40 "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$out/tests.txt" 2>&1
  stamp "tests rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests.txt" | head -20
  left=$(( 248 - ($(date +%s) - t0) ))
  if (( left > 15 )); then
    for tool in racecheck memcheck; do
      timeout $(( left < 60 ? left : 60 )) compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" \
        --gtest_filter="$sanitize" --gtest_brief=1 >"$out/$tool.txt" 2>&1 &
    done
    wait
    for tool in racecheck memcheck; do
      stamp "$tool $(grep -m1 'SUMMARY' "$out/$tool.txt") $(tail -2 "$out/$tool.txt" | tr '\n' ' ')"
    done
  else
    stamp "sanitizers skipped (time)"
  fi
else
  stamp "tests: not built"
fi
python3 - "$out/peers.jsonl" <<'PY' | tee "$out/summary.txt"
import json, sys
print("| d | causal | s | A (ctrl a / a2) | D1 | D2 | FA2 | A/FA2 | D1/A | D2/A | D1/FA2 | D2/FA2 | a2/a | diff A D1 D2 |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "median" not in r:
        print(r); continue
    m = r["median"]
    print(f"| {r['hdim']} | {r['causal']} | {r['seqlen']} | {m['a']} / {m['a2']} | {m.get('d1')} | {m.get('d2')} | "
          f"{m['fa2']} | {r['a_over_fa2']} | {r.get('d1_over_a')} | {r.get('d2_over_a')} | {r.get('d1_over_fa2')} | "
          f"{r.get('d2_over_fa2')} | {r['control_a2_over_a']} | {r.get('max_diff_a_vs_fa2')} "
          f"{r.get('max_diff_d1_vs_fa2')} {r.get('max_diff_d2_vs_fa2')} |")
PY
stamp done
