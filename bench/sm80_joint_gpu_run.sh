#!/usr/bin/env bash
# One device call for the cuda_sm80 forward at short sequences (session 4, issue 4, run 1):
#  1. a test build whose table turns joint_softmax and o_from_registers on for every entry and default
#     (conditional rows too): the cuda_sm80 forward suites, memcheck and racecheck on the odd shapes;
#  2. the tuning harness built from the checked-in table (its "table" rows are what the library runs
#     today) with tools/kernels/short_candidates.json (each table shape without, with joint_softmax,
#     with o_from_registers, with both; outputs compared with the table kernel's), s = 512 ... 16k;
#  3. FA2 (SDPA FLASH_ATTENTION) bf16 at the same seqlens, in the same call;
#  4. ncu with source counters (per-SASS-instruction stall samples) of ours (table) and FA2, d128 s = 512.
out=/tmp/sm80s-out
source "$(dirname "${BASH_SOURCE[0]}")/sm80_device_common.sh"
seqlens=${SM80S_SEQLENS:-512,1024,2048,16384}

cp src/cuda/sm80/forward_tuning.json /tmp/table_checked_in.json
python3 - <<'EOF'
import json, pathlib
p = pathlib.Path("src/cuda/sm80/forward_tuning.json")
t = json.loads(p.read_text())
for e in t["entries"] + t["defaults"]:  # the defaults too: the suites' other head-dim buckets use them
    e["shape"]["joint_softmax"] = True
    e["shape"]["o_from_registers"] = True
p.write_text(json.dumps(t, indent=2) + "\n")
EOF
cp src/cuda/sm80/forward_tuning.json "$out/forward_tuning.tested.json"

stamp "builds (tests: options on; harness: checked-in table + candidates)"
(timeout 200 python3 tools/kernels/tune_forward.py --build-only --candidates tools/kernels/short_candidates.json \
  --table /tmp/table_checked_in.json --build build/tune >"$out/tune_build.txt" 2>&1) &
tune_build=$!
build_tests . build/gpu ""
stamp "test build rc=$?"; grep -m5 -A6 " error" "$out/build.log"
wait $tune_build
stamp "tune build rc=$?"; tail -5 "$out/tune_build.txt"
record_ptxas
run_suites build/gpu/tests/flashattn_tests "" memcheck racecheck

bin=build/tune/sm80_tune
tune_rows "$bin" "$seqlens" 75
timeout 60 python3 bench/sdpa_fa2_forward.py 64,128,256 512,2048 bf16 >"$out/fa2.jsonl" 2>&1
stamp "fa2 bf16 rc=$?"
python3 bench/compare_fa2.py --tune "$out/rows.jsonl" --table /tmp/table_checked_in.json "$out/fa2.jsonl" \
  >"$out/compare.md" 2>&1

stamp "ncu"
sections="--section WarpStateStats --section SourceCounters --section InstructionStats --section SpeedOfLight"
SM80_DIMS=128 SM80_TABLE_ONLY=1 SM80_CAUSAL=0 timeout 60 ncu $sections -k regex:forward_kernel --launch-skip 3 \
  --launch-count 1 -o "$out/ncu_ours_d128" "$bin" 512 >"$out/ncu_ours_d128.log" 2>&1
stamp "ncu ours rc=$?"
FA2_PROFILE=1 timeout 60 ncu $sections -k regex:flash_fwd --launch-skip 2 --launch-count 1 -o "$out/ncu_fa2_d128" \
  python3 bench/sm80_fa2_fixed_cost.py 128 512 512 >"$out/ncu_fa2_d128.log" 2>&1
stamp "ncu fa2 rc=$?"
for who in ours fa2; do
  rep="$out/ncu_${who}_d128.ncu-rep"
  [[ -f $rep ]] || continue
  timeout 30 ncu -i "$rep" --page details >"$out/ncu_${who}_d128.txt" 2>&1
  timeout 30 ncu -i "$rep" --page source --csv --print-source sass >"$out/sass_${who}_d128.csv" 2>&1
done
stamp done
tar -czf "$final/sm80s.tgz" -C "$out" .
cp "$out/run.txt" "$out/compare.md" "$final/" 2>/dev/null
