#!/usr/bin/env bash
# RECORD of device call 1 on tree d7cac09 (peel_first since taken back out of the kernel; runs only
# on that tree). Helper sm80e, session 9 (issue 4), device call 1: lean_setup (L) and peel_first (P) on the sm80 forward.
# Run from the carried tree (.device-carry/sm80e/tree); ../base is the tree of main 7d454ba (the control build),
# ../probe*.cubin the local sm_90 cubins of bench/sm80e_probe*.cu (SASS for the setup's instruction count).
#  1. builds, in parallel: Python extensions (cuda_sm80 only, bf16, d64/128/256, sm_90 SASS of the sm80 kernels,
#     tables from bench/sm80e_table.py): A = main's tree and table (kGeneral rows left out), L = this tree +
#     lean_setup on every row, LP = L + peel_first on the rows of one m-tile per warp; packages flashattn /
#     flashattn_l / flashattn_lp (torch ops renamed); the test build (flashattn_tests, d64/128/256, bf16, the
#     "test" table: lean_setup everywhere, peel_first on the one-m-tile rows, kGeneral rows kept).
#  2. bench/sm80d_peers.py: A, L, LP, FA2, A again per round, 4 rounds, order reversing, 200 ms settle;
#  3. the sm80 forward suites; racecheck + memcheck on the odd shapes, 1023x1024 and CudaRobustness.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80e-out1
final="${OUT:-$PWD/sm80e-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'cp "$out/run.txt" "$final/" 2>/dev/null; tar -czf "$final/sm80e1.tgz" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
gpu_state() { nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1; }
gpu_state
echo "nproc $(nproc)" >>"$out/run.txt"
here=$PWD
for c in ../probe*.cubin; do
  [[ -f $c ]] && cuobjdump -sass "$c" >"$out/sass_$(basename "$c" .cubin).txt" 2>&1
done

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
  copy_tree "$here" "$tree" test
  cmake -S "$tree" -B "$tree/build" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 \
    -DFLASHATTN_HEAD_DIMS="64;128;256" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
    -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_PTXAS_VERBOSE=ON >"$out/tests.configure.log" 2>&1 &&
    timeout 170 cmake --build "$tree/build" --target flashattn_tests -j 6 >"$out/tests.build.log" 2>&1
  echo "tests build rc=$? at $(( $(date +%s) - t0 )) s" >>"$out/run.txt"
}
stamp "builds"
build_ext A "$here/../base" base & pa=$!
build_ext L "$here" l & pl=$!
build_ext LP "$here" lp & plp=$!
build_tests & pt=$!
wait $pa $pl $plp
stamp "extensions: $(grep '^ext' "$out/run.txt" | tr '\n' ' ')"
for n in A L LP; do
  grep -m3 -B2 -A8 " error" "$out/ext_$n.build.log" | head -30
  grep -E "Compiling entry|registers|spill" "$out/ext_$n.build.log" | sed 's/.*ForwardConfigILi//' >"$out/ptxas_$n.txt"
done
py=/tmp/sm80e-pyroot
rm -rf "$py" && mkdir -p "$py" && cp -r python/flashattn "$py/" && cp /tmp/sm80e-A/build/python/_C*.so "$py/flashattn/"
for n in l lp; do
  N=${n^^}
  cp -r python/flashattn "$py/flashattn_$n" && cp /tmp/sm80e-$N/build/python/_C*.so "$py/flashattn_$n/" &&
    sed -i "s/\"flashattn::/\"flashattn$n::/" "$py/flashattn_$n/_ops.py"
done
wait $pt
stamp "$(grep '^tests build' "$out/run.txt")"; grep -m3 -B2 -A8 " error" "$out/tests.build.log" | head -30
gpu_state
rows="256:0:512,64:1:512,128:0:512,256:1:512,256:0:1024,256:1:1024,64:0:512,128:1:512,256:0:2048,256:1:2048"
deadline=$(( t0 + 190 ))
left=$(( deadline + 12 - $(date +%s) )); (( left < 20 )) && left=20
SM80D_OTHERS=l,lp PYTHONPATH=$py timeout $left python3 bench/sm80d_peers.py 4 "$rows" "$deadline" \
  >"$out/peers.jsonl" 2>"$out/peers_err.txt"
stamp "peers rc=$?"; tail -3 "$out/peers_err.txt"
gpu_state
grep -E "Compiling entry|registers|spill" "$out/tests.build.log" | sed 's/.*ForwardConfigILi//' >"$out/ptxas_T.txt"
tests=/tmp/sm80e-T/build/tests/flashattn_tests
filter="*Forward*cuda_sm80*:*Varlen*cuda_sm80*:*KVCache*cuda_sm80*:*Combine*cuda_sm80*:*CudaRobustness*:*Determinism*cuda_sm80*"
sanitize="Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*:Grid/*cuda_sm80*_1023x1024_*:*CudaRobustness*"
if [[ -x $tests ]]; then
  timeout 40 "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$out/tests.txt" 2>&1
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
print("| d | causal | s | A (ctrl a / a2) | L | LP | FA2 | A/FA2 | L/A | LP/A | L/FA2 | LP/FA2 | a2/a | diff A L LP |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "median" not in r:
        print(r); continue
    m = r["median"]
    print(f"| {r['hdim']} | {r['causal']} | {r['seqlen']} | {m['a']} / {m['a2']} | {m.get('l')} | {m.get('lp')} | "
          f"{m['fa2']} | {r['a_over_fa2']} | {r.get('l_over_a')} | {r.get('lp_over_a')} | {r.get('l_over_fa2')} | "
          f"{r.get('lp_over_fa2')} | {r['control_a2_over_a']} | {r.get('max_diff_a_vs_fa2')} "
          f"{r.get('max_diff_l_vs_fa2')} {r.get('max_diff_lp_vs_fa2')} |")
PY
stamp done
