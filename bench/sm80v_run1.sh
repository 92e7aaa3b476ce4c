#!/usr/bin/env bash
# Session 7 (issue 4, helper sm80v), device call 1 of 2: profile + A/B for the d64/d128 short rows and d64 causal.
#  1. background: the tuning harness (d64/d128 bf16; table shapes + tools/kernels/sm80v_candidates1.json);
#     meanwhile ncu of FA2 (SDPA FLASH_ATTENTION) at d64 causal 2k and d128 non-causal 512;
#  2. the harness's A/B rows, every timing >= 100 ms (sustained, as do_bench), candidates in the backend's order,
#     causal d64 rows also in the grouped order (tile_scheduler.h) with factors 1 and 2; controls: "table",
#     "table_100ms", "table_end" (the same call three times) and the table's own shapes as candidates;
#  3. FA2 on compare.py's tensors in the same call (bench/sm80u_peers.py);
#  4. ncu of our table kernels at the same two problems; ncu exports (details + SASS source counters).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80v-out1
final="${OUT:-$PWD/sm80v-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'tar -czf "$final/sm80v1.tgz" --exclude="*.ncu-rep" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
gpu_state() { nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1; }
gpu_state
sections="--section WarpStateStats --section SourceCounters --section InstructionStats --section SpeedOfLight \
  --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section Occupancy --section LaunchStats"

stamp "tune build"
(timeout 150 python3 tools/kernels/tune_forward.py --build-only --head-dims "64;128" --dtypes bf16 \
  --candidates tools/kernels/sm80v_candidates1.json --build build/tune1 >"$out/tune_build.txt" 2>&1) &
build=$!
for spec in "64 2048 1 d64c2k" "128 512 0 d128n512"; do
  set -- $spec
  # shellcheck disable=SC2086
  timeout 40 ncu $sections -k regex:flash_fwd --launch-skip 2 --launch-count 1 -o "$out/ncu_fa2_$4" \
    python3 bench/sm80v_fa2_profile.py "$1" "$2" "$3" >"$out/ncu_fa2_$4.log" 2>&1
  stamp "ncu fa2 $4 rc=$?"
done
wait $build
stamp "tune build rc=$?"; tail -3 "$out/tune_build.txt"
cat build/tune1/obj/*.ptxas.txt 2>/dev/null | grep -E "Compiling|registers|spill" | sed 's/.*ForwardConfigILi//' \
  >"$out/ptxas.txt"
bin=build/tune1/sm80_tune
common="SM80_MIN_MS=100 SM80_NORMAL=1 SM80_ONE_ORDER=1 SM80_BF16_ONLY=1 SM80_GENERAL_SEQLEN=0"
env $common SM80_DIMS=64 SM80_CAUSAL=1 SM80_GROUP_FACTORS=1,2 timeout 70 "$bin" 512,1024,2048,4096 \
  >"$out/rows_d64c.jsonl" 2>&1
stamp "rows d64 causal rc=$?"
env $common SM80_DIMS=64 SM80_CAUSAL=0 timeout 30 "$bin" 512,1024,2048 >"$out/rows_d64n.jsonl" 2>&1
stamp "rows d64 non-causal rc=$?"
env $common SM80_DIMS=128 SM80_CAUSAL=0 timeout 25 "$bin" 512,1024,2048 >"$out/rows_d128n.jsonl" 2>&1
stamp "rows d128 non-causal rc=$?"
timeout 25 python3 bench/sm80u_peers.py 64 512,1024,2048,4096 0,1 >"$out/fa2_d64.jsonl" 2>&1
stamp "fa2 d64 rc=$?"
timeout 15 python3 bench/sm80u_peers.py 128 512,1024,2048 0 >"$out/fa2_d128.jsonl" 2>&1
stamp "fa2 d128 rc=$?"
gpu_state
python3 bench/sm80v_table.py "$out"/rows_d64c.jsonl "$out"/rows_d64n.jsonl "$out"/rows_d128n.jsonl \
  --fa2 "$out/fa2_d64.jsonl" --fa2 "$out/fa2_d128.jsonl" >"$out/summary.txt" 2>&1
cat "$out/summary.txt"
for spec in "64 1 2048 d64c2k" "128 0 512 d128n512"; do
  set -- $spec
  left=$(( 265 - ($(date +%s) - t0) ))
  (( left > 20 )) || { stamp "ncu ours $4 skipped (time)"; continue; }
  # shellcheck disable=SC2086
  SM80_DIMS=$1 SM80_CAUSAL=$2 SM80_TABLE_ONLY=1 SM80_NORMAL=1 timeout $(( left < 40 ? left : 40 )) ncu $sections \
    -k regex:forward_kernel --launch-skip 3 --launch-count 1 -o "$out/ncu_ours_$4" "$bin" "$3" \
    >"$out/ncu_ours_$4.log" 2>&1
  stamp "ncu ours $4 rc=$?"
done
for rep in "$out"/ncu_*.ncu-rep; do
  [[ -f $rep ]] || continue
  left=$(( 280 - ($(date +%s) - t0) ))
  (( left > 5 )) || break
  base=${rep%.ncu-rep}
  timeout 15 ncu -i "$rep" --page details >"$base.txt" 2>&1
  timeout 15 ncu -i "$rep" --page source --csv --print-source sass >"$base.sass.csv" 2>&1
done
stamp done
