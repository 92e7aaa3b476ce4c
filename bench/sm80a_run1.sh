#!/usr/bin/env bash
# RECORD of device call 1 on tree e999ba8 (results: bench/sm80a_results.md, docs/kernel-notes.md v16).
# Session 8 (issue 4, helper sm80a), device call 1: the d256 short rows of the cuda_sm80 forward, timed three ways
# in one call (step 0: why the tuning harness and bench/compare.py disagree), plus the d256 64 x 64 kernel with
# xor_lane_offsets (X) / approx_epilogue (A) (step 1).
#  1. builds, in parallel: the tuning harness (bench/sm80a_candidates.json: the table's 64 x 64 shape E N Q B, + X,
#     + A, + X A; d256 bf16, sm_90); Python extension A (this tree's table) and B (bench/sm80a_table.py: X on the
#     d256 single-buffer rows; package renamed flashattn_b so that both load in one process); d256 bf16, no backward;
#  2. harness pass 1 (every timing >= 100 ms; table / table_100ms / table_end = the control): non-causal 512-2k
#     m fastest, causal 512/1k in both orders and grouped (factor 2);
#  3. bench/sm80a_methods.py: ours (compare.py's call), ours_raw (no LSE, preallocated out), ours_b and FA2, each
#     timed as compare.py (do_bench), as the harness (sustained, memset flush), back to back; kernels launched;
#  4. bench/compare.py --modes fwd --hdims 256 --seqlens 512,1024,2048 --rounds 4 on extension A;
#  5. harness pass 2.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80a-out
final="${OUT:-$PWD/sm80a-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'cp "$out/run.txt" "$final/" 2>/dev/null; tar -czf "$final/sm80a1.tgz" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
gpu_state() { nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1; }
gpu_state
echo "tree $(cat TREE 2>/dev/null)" >>"$out/run.txt"

tb=/tmp/sm80a-treeb
rm -rf "$tb" && mkdir -p "$tb" && tar --exclude='./build*' --exclude=./.git -cf - . | tar -C "$tb" -xf -
python3 bench/sm80a_table.py src/cuda/sm80/forward_tuning.json "$tb/src/cuda/sm80/forward_tuning.json" xor_lane_offsets
pyargs="-DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_HEAD_DIMS=256 -DFLASHATTN_DTYPES=bf16 \
  -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
  -DFLASHATTN_BUILD_PYTHON=ON -DPython_EXECUTABLE=$(command -v python3)"
build_ext() {  # SOURCE BUILD TAG
  # shellcheck disable=SC2086
  cmake -S "$1" -B "$2" -G Ninja $pyargs >"$out/$3_configure.log" 2>&1 &&
    timeout 200 cmake --build "$2" --target _C -j 12 >"$out/$3_build.log" 2>&1
}
stamp "builds"
build_ext . build/sm80a-pa pa &
pa=$!
build_ext "$tb" "$tb/build" pb &
pb=$!
timeout 170 python3 tools/kernels/tune_forward.py --build-only --head-dims 256 --dtypes bf16 \
  --candidates bench/sm80a_candidates.json --build build/sm80a-tune >"$out/tune_build.txt" 2>&1
stamp "tune build rc=$?"; tail -3 "$out/tune_build.txt"
for f in build/sm80a-tune/obj/forward_sm80_hdim256*.ptxas.txt; do
  echo "## $(basename "$f")"; grep -E "Function properties|registers|spill" "$f" | sed 's/.*ForwardConfigILi//'
done >"$out/ptxas.txt" 2>/dev/null
bin=build/sm80a-tune/sm80_tune
common="SM80_MIN_MS=100 SM80_NORMAL=1 SM80_BF16_ONLY=1 SM80_GENERAL_SEQLEN=0 SM80_DIMS=256"
pass() {
  env $common SM80_CAUSAL=0 SM80_ONE_ORDER=1 timeout 40 "$bin" 512,1024,2048 >"$out/rows_n_$1.jsonl" 2>&1
  stamp "pass $1 non-causal rc=$?"
  env $common SM80_CAUSAL=1 SM80_GROUP_FACTORS=2 timeout 40 "$bin" 512,1024 >"$out/rows_c_$1.jsonl" 2>&1
  stamp "pass $1 causal rc=$?"
}
pass 1

wait $pa
stamp "ext A rc=$?"; grep -m5 -A6 " error" "$out/pa_build.log"
wait $pb
stamp "ext B rc=$?"; grep -m5 -A6 " error" "$out/pb_build.log"
py=build/sm80a-pyroot
rm -rf "$py" && mkdir -p "$py" && cp -r python/flashattn "$py/" && cp build/sm80a-pa/python/_C*.so "$py/flashattn/"
cp -r python/flashattn "$py/flashattn_b" && cp "$tb"/build/python/_C*.so "$py/flashattn_b/" &&
  sed -i 's/"flashattn::/"flashattnb::/' "$py/flashattn_b/_ops.py"
PYTHONPATH=$PWD/$py timeout 75 python3 bench/sm80a_methods.py 2 >"$out/methods.jsonl" 2>"$out/methods.err"
stamp "methods rc=$?"; tail -3 "$out/methods.err"
PYTHONPATH=$PWD/$py timeout 45 python3 bench/compare.py --modes fwd --hdims 256 --seqlens 512,1024,2048 \
  --rounds 4 --no-decode --out "$out" --tag sm80a1 >"$out/compare.txt" 2>&1
stamp "compare rc=$?"
left=$(( 240 - ($(date +%s) - t0) ))
if (( left > 30 )); then pass 2; else stamp "pass 2 skipped (time)"; fi
gpu_state
stamp done
