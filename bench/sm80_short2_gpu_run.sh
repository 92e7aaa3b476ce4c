#!/usr/bin/env bash
# One device call verifying the proposed cuda_sm80 forward table (session 4, issue 4, run 2):
#  1. test build A = the checked-in (proposed) table: the cuda_sm80 forward suites, memcheck and racecheck;
#  2. test build B = the same table with prefetch_fragments on for every entry and default (the experiment
#     of this run): the same suites and racecheck, so a win could be adopted as verified;
#  3. FA2 (SDPA FLASH_ATTENTION) bf16 on the standard grid, dropout at s = 512 and 2048;
#  4. the tuning harness built from the proposed table ("table" rows = what the library now runs) with
#     tools/kernels/short_candidates2.json: the previous table's shapes (A/B in the same process) and the
#     prefetch_fragments variants, s = 512 ... 16k.
out=/tmp/sm80s-out2
source "$(dirname "${BASH_SOURCE[0]}")/sm80_device_common.sh"
seqlens=${SM80S_SEQLENS:-512,1024,2048,4096,8192,16384}

rm -rf /tmp/pf_tree && mkdir -p /tmp/pf_tree &&
  tar --exclude='./build*' -cf - . | tar -C /tmp/pf_tree -xf -
python3 - <<'PY'
import json, pathlib
p = pathlib.Path("/tmp/pf_tree/src/cuda/sm80/forward_tuning.json")
t = json.loads(p.read_text())
for e in t["entries"] + t["defaults"]:
    e["shape"]["prefetch_fragments"] = True
p.write_text(json.dumps(t, indent=2) + "\n")
PY

stamp "builds (A: table, B: table + prefetch_fragments, harness)"
(timeout 200 python3 tools/kernels/tune_forward.py --build-only --candidates tools/kernels/short_candidates2.json \
  --build build/tune >"$out/tune_build.txt" 2>&1) &
tune_build=$!
(build_tests /tmp/pf_tree /tmp/pf_tree/build/gpu "pf_") &
pf_build=$!
build_tests . build/gpu ""
stamp "test build A rc=$?"; grep -m5 -A6 " error" "$out/build.log"
run_suites build/gpu/tests/flashattn_tests "" memcheck racecheck
timeout 60 python3 bench/sdpa_fa2_forward.py 64,128,256 512,2048 bf16 >"$out/fa2.jsonl" 2>&1
stamp "fa2 bf16 rc=$?"
wait $tune_build
stamp "tune build rc=$?"; tail -3 "$out/tune_build.txt"
record_ptxas
bin=build/tune/sm80_tune
tune_rows "$bin" "$seqlens" 70
python3 bench/compare_fa2.py --tune "$out/rows.jsonl" --table src/cuda/sm80/forward_tuning.json "$out/fa2.jsonl" \
  >"$out/compare.md" 2>&1
wait $pf_build
stamp "test build B rc=$?"; grep -m5 -A6 " error" "$out/pf_build.log"
run_suites /tmp/pf_tree/build/gpu/tests/flashattn_tests "pf_" racecheck
stamp done
tar -czf "$final/sm80s2.tgz" -C "$out" .
cp "$out/run.txt" "$out/compare.md" "$final/" 2>/dev/null
