#!/usr/bin/env bash
# RECORD of device call 1 on tree ea41bb6 (warp_key_bounds / balanced_m_tiles, both since taken back out;
# results: bench/sm80d_results.md, docs/kernel-notes.md v18). Runs only on that tree.
# Helper sm80d, session 9 (issue 4: the last cuda_sm80 forward rows below FA2), device call 1.
#  1. builds, in parallel: Python extension A (this tree's table without the kGeneral-only rows, which no
#     measured row runs), B (the same with warp_key_bounds (K) on every causal row; bench/sm80d_table.py) and C
#     (K + balanced_m_tiles on the causal rows with two m-tiles per warp; d64/d128 only), cuda_sm80 only, bf16,
#     sm_90 SASS; B's and C's torch ops renamed (packages flashattn_b / _c) so that A, B, C and FA2 run in one
#     process. Meanwhile: ncu of FA2 at d256 non-causal 512 (bench/sm80v_fa2_profile.py).
#  2. bench/sm80d_peers.py: A, B, C, FA2, A again per round (A twice = the control), 4 rounds with the order
#     reversing, every timing after 200 ms of its own calls (compare.bench_ms), rows in priority order until
#     the deadline;
#  3. ncu of ours (extension A) at the same problem as FA2's.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80d-out1
final="${OUT:-$PWD/sm80d-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'cp "$out/run.txt" "$final/" 2>/dev/null; tar -czf "$final/sm80d1.tgz" --exclude="*.ncu-rep" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
gpu_state() { nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1; }
gpu_state
python3 -c "import torch; print('torch', torch.__version__)" >>"$out/run.txt" 2>&1
echo "tree $(cat TREE 2>/dev/null) nproc $(nproc)" >>"$out/run.txt"

build_ext() {  # NAME HEAD_DIMS [OPTION...]
  local name=$1 dims=$2 tree=/tmp/sm80d-$1
  shift 2
  rm -rf "$tree" && mkdir -p "$tree" && tar --exclude='./build*' --exclude=./.git -cf - . | tar -C "$tree" -xf -
  python3 bench/sm80d_table.py src/cuda/sm80/forward_tuning.json "$tree/src/cuda/sm80/forward_tuning.json" "$@"
  sed -i 's/^set(FLASHATTN_SM80_GENCODE .*)$/set(FLASHATTN_SM80_GENCODE)/' "$tree/src/cuda/CMakeLists.txt"
  cmake -S "$tree" -B "$tree/build" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 \
    -DFLASHATTN_HEAD_DIMS="$dims" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
    -DFLASHATTN_BUILD_PYTHON=ON -DFLASHATTN_PTXAS_VERBOSE=ON -DPython_EXECUTABLE="$(command -v python3)" \
    >"$out/ext_$name.configure.log" 2>&1 &&
    timeout 175 cmake --build "$tree/build" --target _C -j 8 >"$out/ext_$name.build.log" 2>&1
  echo "ext $name rc=$? at $(( $(date +%s) - t0 )) s" >>"$out/run.txt"
}
stamp "builds"
build_ext A "64;128;256" & pa=$!
build_ext B "64;128;256" warp_key_bounds & pb=$!
build_ext C "64;128" warp_key_bounds balanced_m_tiles & pc=$!

sections="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
  --section InstructionStats --section SchedulerStats --section MemoryWorkloadAnalysis --section SourceCounters"
metrics="--metrics sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,gpc__cycles_elapsed.max,\
smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,\
dram__bytes_write.sum,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,\
smsp__inst_executed_op_ldsm.sum,smsp__inst_executed_pipe_tensor_op_hmma.sum,launch__grid_size,launch__registers_per_thread"
ncu_one() {  # TAG KERNEL_REGEX PROGRAM...
  local tag=$1 kregex=$2
  shift 2
  # shellcheck disable=SC2086
  timeout 45 ncu $sections $metrics -k "regex:$kregex" --launch-skip 2 --launch-count 1 -o "$out/ncu_$tag" "$@" \
    >"$out/ncu_$tag.log" 2>&1
  stamp "ncu $tag rc=$?"
  timeout 20 ncu -i "$out/ncu_$tag.ncu-rep" --page details >"$out/ncu_$tag.txt" 2>&1
  timeout 20 ncu -i "$out/ncu_$tag.ncu-rep" --page source --csv --print-source sass >"$out/ncu_$tag.sass.csv" 2>&1
}
ncu_one fa2_d256n512 flash_fwd python3 bench/sm80v_fa2_profile.py 256 512 0
wait $pa
wait $pb
wait $pc
stamp "extensions: $(grep '^ext' "$out/run.txt" | tr '\n' ' ')"
for n in A B C; do grep -m3 -B2 -A8 " error" "$out/ext_$n.build.log" | head -30; done
for n in A B C; do
  grep -E "Compiling entry|registers|spill" "$out/ext_$n.build.log" | sed 's/.*ForwardConfigILi//' >"$out/ptxas_$n.txt"
done
py=/tmp/sm80d-pyroot
rm -rf "$py" && mkdir -p "$py" && cp -r python/flashattn "$py/" && cp /tmp/sm80d-A/build/python/_C*.so "$py/flashattn/"
for n in b c; do
  N=${n^^}
  cp -r python/flashattn "$py/flashattn_$n" && cp /tmp/sm80d-$N/build/python/_C*.so "$py/flashattn_$n/" &&
    sed -i "s/\"flashattn::/\"flashattn$n::/" "$py/flashattn_$n/_ops.py"
done
gpu_state
rows="256:0:512,64:1:1024,256:1:2048,64:1:2048,128:1:512,64:1:512,128:1:1024,256:1:1024,256:0:1024"
rows="$rows,256:1:4096,128:1:2048,64:1:4096,256:1:512"
deadline=$(( t0 + 200 ))
left=$(( deadline + 12 - $(date +%s) )); (( left < 20 )) && left=20
PYTHONPATH=$py timeout $left python3 bench/sm80d_peers.py 4 "$rows" "$deadline" \
  >"$out/peers.jsonl" 2>"$out/peers_err.txt"
stamp "peers rc=$?"; tail -3 "$out/peers_err.txt"
gpu_state
ncu_one ours_d256n512 forward_kernel env PYTHONPATH=$py python3 bench/sm80d_profile.py 256 512 0
python3 - "$out/peers.jsonl" <<'PY' | tee "$out/summary.txt"
import json, sys
print("| d | causal | s | A (ctrl a / a2) | B (K) | C (K+BAL) | FA2 | A/FA2 | B/A | C/A | B/FA2 | C/FA2 | a2/a | diff A B C |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "median" not in r:
        print(r); continue
    m = r["median"]
    print(f"| {r['hdim']} | {r['causal']} | {r['seqlen']} | {m['a']} / {m['a2']} | {m.get('b')} | {m.get('c')} | "
          f"{m['fa2']} | {r['a_over_fa2']} | {r.get('b_over_a')} | {r.get('c_over_a')} | {r.get('b_over_fa2')} | "
          f"{r.get('c_over_fa2')} | {r['control_a2_over_a']} | {r.get('max_diff_a_vs_fa2')} "
          f"{r.get('max_diff_b_vs_fa2')} {r.get('max_diff_c_vs_fa2')} |")
PY
stamp done
