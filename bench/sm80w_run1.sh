#!/usr/bin/env bash
# Session 7 (issue 4, helper sm80w), device call 1 of 2: d256 forward, FlashAttention 2's copy order and
# copy layout on the 64 x 64 single-buffer kernel (the d256 s <= 2048 rows), A/B with a control.
#  1. the tuning harness, d256 bf16 only, candidates bench/sm80w_candidates1.json: the table's short-row
#     shape 1x4x64 s1 R (first and last: the control), + early_k_copy (E), + E + panel_loads (N), + N,
#     + E + whole_tile_loads, and the long-row ring 1x8x64 s2 W (the table's) and 1x8x64 s2 N;
#  2. harness rows, every timing sustained (SM80_MIN_MS=100, do_bench's length): non-causal 512..16k in the
#     backend's order (m fastest), causal 512..4096 in both orders (the table runs m fastest at 512,
#     heads fastest above);
#  3. FA2 (SDPA FLASH_ATTENTION) on compare.py's tensors in the same call (bench/sm80u_peers.py);
#  4. ncu (s = 2048 non-causal) of the control, E and E + N kernels (FA2's profile of the same problem is
#     session 5's, /tmp/sm80t/r1 on the helper machine: the SDPA kernel has not changed).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80w-out1
final="${OUT:-$PWD/sm80w-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'tar -czf "$final/sm80w1.tgz" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader \
  >>"$out/run.txt" 2>&1

stamp "tune build"
timeout 150 python3 tools/kernels/tune_forward.py --build-only --head-dims 256 --dtypes bf16 \
  --candidates bench/sm80w_candidates1.json --build build/tune-w1 >"$out/tune_build.txt" 2>&1
stamp "tune build rc=$?"; tail -3 "$out/tune_build.txt"
cat build/tune-w1/obj/*.ptxas.txt 2>/dev/null | grep -E "Compiling|registers|spill" | sed 's/.*ForwardConfigILi//' \
  >"$out/ptxas.txt"
bin=build/tune-w1/sm80_tune
common="SM80_NORMAL=1 SM80_BF16_ONLY=1 SM80_GENERAL_SEQLEN=0 SM80_MIN_MS=100 SM80_DIMS=256"
env $common SM80_ONE_ORDER=1 SM80_CAUSAL=0 timeout 70 "$bin" 512,1024,2048,4096,8192,16384 \
  >"$out/rows_nc.jsonl" 2>&1
stamp "rows non-causal rc=$?"
env $common SM80_CAUSAL=1 timeout 60 "$bin" 512,1024,2048,4096 >"$out/rows_c.jsonl" 2>&1
stamp "rows causal rc=$?"
timeout 40 python3 bench/sm80u_peers.py 256 >"$out/fa2.jsonl" 2>&1
stamp "fa2 rc=$?"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1

# ncu: the first launch of each kernel at s = 2048 (mangled TileShape fields: ... R P W L E N).
sections="--section WarpStateStats --section SourceCounters --section InstructionStats --section SpeedOfLight \
  --section MemoryWorkloadAnalysis_Tables --section Occupancy --section LaunchStats"
base="TileShapeELi1ELi4ELi64ELi1ELb0ELi2ELb0ELb0ELb1ELb0ELb0ELb0"
for pair in "ctl:${base}ELb0ELb0EEEEELb0E" "E:${base}ELb1ELb0EEEEELb0E" "EN:${base}ELb1ELb1EEEEELb0E"; do
  name=${pair%%:*}
  left=$(( 265 - ($(date +%s) - t0) ))
  (( left > 25 )) || { stamp "ncu $name skipped (time)"; continue; }
  # shellcheck disable=SC2086
  env SM80_NORMAL=1 SM80_BF16_ONLY=1 SM80_GENERAL_SEQLEN=0 SM80_DIMS=256 SM80_ONE_ORDER=1 SM80_CAUSAL=0 \
    timeout $(( left < 45 ? left : 45 )) ncu $sections --kernel-name-base mangled -k "regex:${pair#*:}" \
    --launch-count 1 -o "$out/ncu_$name" "$bin" 2048 >"$out/ncu_$name.log" 2>&1
  stamp "ncu $name rc=$?"
done
for rep in "$out"/ncu_*.ncu-rep; do
  [[ -f $rep ]] || continue
  left=$(( 280 - ($(date +%s) - t0) ))
  (( left > 5 )) || break
  r=${rep%.ncu-rep}
  timeout 15 ncu -i "$rep" --page details >"$r.txt" 2>&1
  timeout 15 ncu -i "$rep" --page source --csv --print-source sass >"$r.sass.csv" 2>&1
  rm -f "$rep"
done
stamp done
cp "$out/run.txt" "$final/" 2>/dev/null
