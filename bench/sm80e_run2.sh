#!/usr/bin/env bash
# Helper sm80e, session 9 (issue 4), device call 2: the committed table (lean_setup on every row), verified and
# timed again. Run from the carried tree (.device-carry/sm80e/tree); ../base is the tree of main 7d454ba.
#  1. builds, in parallel: Python extensions (cuda_sm80 only, bf16, d64/128/256, sm_90 SASS of the sm80 kernels,
#     kGeneral-only rows left out, bench/sm80e_table.py base): A = main's tree and table, L = this tree and
#     its table; packages flashattn / flashattn_l; the test build (flashattn_tests, d64/128/256, bf16, this tree's
#     whole table, -DFLASHATTN_SM80_TEST_HEAD_GROUP=3 so that the suites' heads-fastest problems run the
#     grouped decode with a short last group).
#  2. bench/sm80d_peers.py: A, L, FA2, A again per round, 4 rounds, order reversing, 200 ms settle;
#  3. flashattn_tests --gtest_filter='*cuda_sm80*'; racecheck + memcheck on the odd shapes, 1023x1024 and
#     CudaRobustness.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80e-out2
final="${OUT:-$PWD/sm80e-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'cp "$out/run.txt" "$final/" 2>/dev/null; tar -czf "$final/sm80e2.tgz" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
gpu_state() { nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1; }
gpu_state
echo "nproc $(nproc)" >>"$out/run.txt"
here=$PWD

copy_tree() {  # SOURCE DEST VARIANT
  rm -rf "$2" && mkdir -p "$2" && tar -C "$1" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$2" -xf -
  python3 "$here/bench/sm80e_table.py" "$1/src/cuda/sm80/forward_tuning.json" "$2/src/cuda/sm80/forward_tuning.json" "$3"
  sed -i 's/^set(FLASHATTN_SM80_GENCODE .*)$/set(FLASHATTN_SM80_GENCODE)/' "$2/src/cuda/CMakeLists.txt"
}
build_ext() {  # NAME SOURCE VARIANT
  local name=$1 tree=/tmp/sm80e-$1
  copy_tree "$2" "$tree" "$3"
  cmake -S "$tree" -B "$tree/build" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 \
    -DFLASHATTN_HEAD_DIMS="64;128;256" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
    -DFLASHATTN_BUILD_PYTHON=ON -DFLASHATTN_PTXAS_VERBOSE=ON -DPython_EXECUTABLE="$(command -v python3)" \
    >"$out/ext_$name.configure.log" 2>&1 &&
    timeout 150 cmake --build "$tree/build" --target _C -j 5 >"$out/ext_$name.build.log" 2>&1
  echo "ext $name rc=$? at $(( $(date +%s) - t0 )) s" >>"$out/run.txt"
}
build_tests() {
  local tree=/tmp/sm80e-T
  copy_tree "$here" "$tree" full
  cmake -S "$tree" -B "$tree/build" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 \
    -DFLASHATTN_HEAD_DIMS="64;128;256" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF \
    -DCMAKE_CUDA_FLAGS="-DFLASHATTN_SM80_TEST_HEAD_GROUP=3" \
    -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
    -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_PTXAS_VERBOSE=ON >"$out/tests.configure.log" 2>&1 &&
    timeout 170 cmake --build "$tree/build" --target flashattn_tests -j 6 >"$out/tests.build.log" 2>&1
  echo "tests build rc=$? at $(( $(date +%s) - t0 )) s" >>"$out/run.txt"
}
stamp "builds"
build_ext A "$here/../base" base & pa=$!
build_ext L "$here" base & pl=$!
build_tests & pt=$!
wait $pa $pl
stamp "extensions: $(grep '^ext' "$out/run.txt" | tr '\n' ' ')"
for n in A L; do
  grep -m3 -B2 -A8 " error" "$out/ext_$n.build.log" | head -30
  grep -E "Compiling entry|registers|spill" "$out/ext_$n.build.log" | sed 's/.*ForwardConfigILi//' >"$out/ptxas_$n.txt"
done
py=/tmp/sm80e-pyroot
rm -rf "$py" && mkdir -p "$py" && cp -r python/flashattn "$py/" && cp /tmp/sm80e-A/build/python/_C*.so "$py/flashattn/"
for n in l; do
  N=${n^^}
  cp -r python/flashattn "$py/flashattn_$n" && cp /tmp/sm80e-$N/build/python/_C*.so "$py/flashattn_$n/" &&
    sed -i "s/\"flashattn::/\"flashattn$n::/" "$py/flashattn_$n/_ops.py"
done
wait $pt
stamp "$(grep '^tests build' "$out/run.txt")"; grep -m3 -B2 -A8 " error" "$out/tests.build.log" | head -30
gpu_state
rows="256:0:512,64:1:512,128:0:512,256:1:512,256:0:1024,256:1:1024,64:0:512,128:1:512,256:0:2048,256:1:2048,64:1:2048,128:1:2048,64:0:4096,256:1:4096"
deadline=$(( t0 + 175 ))
left=$(( deadline + 12 - $(date +%s) )); (( left < 20 )) && left=20
SM80D_OTHERS=l PYTHONPATH=$py timeout $left python3 bench/sm80d_peers.py 4 "$rows" "$deadline" \
  >"$out/peers.jsonl" 2>"$out/peers_err.txt"
stamp "peers rc=$?"; tail -3 "$out/peers_err.txt"
gpu_state
grep -E "Compiling entry|registers|spill" "$out/tests.build.log" | sed 's/.*ForwardConfigILi//' >"$out/ptxas_T.txt"
tests=/tmp/sm80e-T/build/tests/flashattn_tests
filter="*cuda_sm80*:*CudaRobustness*"
sanitize="Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*:Grid/*cuda_sm80*_1023x1024_*:*CudaRobustness*"
if [[ -x $tests ]]; then
  timeout 60 "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$out/tests.txt" 2>&1
  stamp "tests rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests.txt" | head -20
  left=$(( 250 - ($(date +%s) - t0) ))
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
print("| d | causal | s | A (ctrl a / a2) | L | FA2 | A/FA2 | L/A | L/FA2 | a2/a | diff A L |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "median" not in r:
        print(r); continue
    m = r["median"]
    print(f"| {r['hdim']} | {r['causal']} | {r['seqlen']} | {m['a']} / {m['a2']} | {m.get('l')} | "
          f"{m['fa2']} | {r['a_over_fa2']} | {r.get('l_over_a')} | {r.get('l_over_fa2')} | "
          f"{r['control_a2_over_a']} | {r.get('max_diff_a_vs_fa2')} {r.get('max_diff_l_vs_fa2')} |")
PY
stamp done
