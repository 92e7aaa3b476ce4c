#!/usr/bin/env bash
# Session 6 (issue 4, helper sm80u), device call 1 of 2: spread_copies A/B against the table kernels,
# and why the C++ harness timed the sm80 forward above compare.py (sustained clocks?).
# A record of the call on tree 77b32dd: spread_copies was removed in 26b0968, and on later trees the generator
# drops the field, so tools/kernels/sm80u_candidates1.json would time duplicates of the table shapes.
#  1. the tuning harness (d64/128/256 bf16, sm_90; tools/kernels/sm80u_candidates1.json: every table shape of
#     the losing rows, as a control, beside the same shape with spread_copies 1 and 2);
#  2. the harness rows (N(0, 1) inputs, the backend's order, no fp16/sync/kGeneral rows): per row "table"
#     (cuda_sm80::run), "table_100ms" (the same call timed over ~100 ms like do_bench), the candidates,
#     then "table_end" (the table call again: with "table" and the identical candidate, the control);
#  3. bench/sm80u_peers.py: FA2 on compare.py's tensors timed both ways (do_bench 100 ms and the harness's 25).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80u-out1
final="${OUT:-$PWD/sm80u-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'tar -czf "$final/sm80u1.tgz" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
python3 -c "import torch; print('torch', torch.__version__)" >>"$out/run.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1

stamp "build"
timeout 150 python3 tools/kernels/tune_forward.py --build-only --head-dims "64;128;256" --dtypes bf16 \
  --candidates tools/kernels/sm80u_candidates1.json --build build/tune >"$out/tune_build.txt" 2>&1
stamp "tune build rc=$?"; tail -3 "$out/tune_build.txt"
cat build/tune/obj/*.ptxas.txt 2>/dev/null | grep -E "Compiling|registers|spill" | sed 's/.*ForwardConfigILi//' \
  >"$out/ptxas.txt"
bin=build/tune/sm80_tune
# FA2 first (no build needed), then our rows.
timeout 45 python3 bench/sm80u_peers.py 64,128,256 >"$out/fa2.jsonl" 2>&1
stamp "fa2 rc=$?"
for d in 256 128 64; do
  SM80_NORMAL=1 SM80_BF16_ONLY=1 SM80_ONE_ORDER=1 SM80_GENERAL_SEQLEN=0 SM80_DIMS=$d timeout 40 "$bin" \
    512,1024,2048,4096,8192,16384 >"$out/rows_d$d.jsonl" 2>&1
  stamp "rows d$d rc=$?"
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1
stamp done
cp "$out/run.txt" "$final/" 2>/dev/null
