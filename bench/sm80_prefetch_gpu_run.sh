#!/usr/bin/env bash
# One device call for the cuda_sm80 forward's prefetch_next work (session 3, issue 4):
#  1. build (sm_90, no backward) with the checked-in table; the cuda_sm80 forward suites + memcheck;
#  2. a second build whose table turns prefetch_next on for every shape, with a persistent grid of 3
#     CTAs (-DFLASHATTN_SM80_PERSISTENT_CTAS=3), so the suites' small problems run many tiles per CTA
#     through the prefetch path: the same suites + memcheck + racecheck (SM80_SKIP_PREFETCH_CHECK=1: skip);
#  3. the tuning sweep (tools/kernels/tune_forward.py; every candidate on the standard grid, bf16, its
#     output compared with the table kernel's; the table kernels on bf16 and fp16);
#  4. FA2 (SDPA FLASH_ATTENTION) on bf16 and fp16 in the same run.
# Everything under a work folder; the few files worth reading go to $OUT, the rest as logs.tgz.
out=/tmp/sm80c-out
source "$(dirname "${BASH_SOURCE[0]}")/sm80_device_common.sh"

stamp "build (checked-in table)"
build_tests . build/gpu ""
stamp "build rc=$?"; grep -m5 -B2 -A6 "error" "$out/build.log"

if [[ -z "${SM80_SKIP_PREFETCH_CHECK:-}" ]]; then
  # The prefetch tree: this tree with every table shape (entries and defaults) switched to prefetch_next.
  rm -rf /tmp/pf && mkdir -p /tmp/pf && tar --exclude=./build --exclude=./.git -cf - . | tar -C /tmp/pf -xf -
  python3 - <<'EOF'
import json, pathlib
p = pathlib.Path("/tmp/pf/src/cuda/sm80/forward_tuning.json")
t = json.loads(p.read_text())
for e in t["entries"] + t["defaults"]:
    assert e["shape"]["stages"] == 2
    e["shape"]["prefetch_next"] = True
p.write_text(json.dumps(t, indent=2))
EOF
  build_tests /tmp/pf /tmp/pf/build pf_ -DCMAKE_CUDA_FLAGS="-DFLASHATTN_SM80_PERSISTENT_CTAS=3" &
  pf_build=$!
fi

run_suites build/gpu/tests/flashattn_tests "" memcheck

if [[ -z "${SM80_SKIP_PREFETCH_CHECK:-}" ]]; then
  wait $pf_build
  stamp "prefetch build rc=$?"; grep -m5 -B2 -A6 "error" "$out/pf_build.log"
  run_suites /tmp/pf/build/tests/flashattn_tests pf_ memcheck racecheck
fi

stamp "tuning sweep"
cp src/cuda/sm80/forward_tuning.json "$out/forward_tuning.before.json"
timeout ${SM80_TUNE_TIMEOUT:-170} python3 tools/kernels/tune_forward.py --seqlens "${SM80_SEQLENS:-512,1024,2048,4096,8192,16384}" \
  --build build/tune >"$out/tune.txt" 2>&1
stamp "tune rc=$?"; grep -v '^{' "$out/tune.txt" | head -30
cp src/cuda/sm80/forward_tuning.json "$out/forward_tuning.json"
cp build/tune/tune_rows.jsonl "$out/" 2>/dev/null
record_ptxas

stamp "FA2 bf16, fp16"
timeout 60 python3 bench/sdpa_fa2_forward.py 64,128,256 2048 bf16 >"$out/fa2.jsonl" 2>&1
stamp "fa2 bf16 rc=$?"
timeout 60 python3 bench/sdpa_fa2_forward.py 64,128,256 0 fp16 >"$out/fa2_fp16.jsonl" 2>&1
stamp "fa2 fp16 rc=$?"
python3 bench/compare_fa2.py --tune "$out/tune_rows.jsonl" --table "$out/forward_tuning.json" "$out/fa2.jsonl" \
  "$out/fa2_fp16.jsonl" >"$out/compare.md" 2>&1
stamp done
tar -czf "$final/sm80c.tgz" -C "$out" .
cp "$out/run.txt" "$final/"
