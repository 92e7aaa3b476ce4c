#!/usr/bin/env bash
# One device call verifying the proposed cuda_sm80 forward table (session 3, issue 4):
#  1. build (sm_90, no backward); the cuda_sm80 forward suites, memcheck and racecheck on the grid's
#     odd shapes;
#  2. d256 on the standard grid: every table row (cuda_sm80::run; bf16, fp16, sync) and the two d256
#     shapes as candidates, with the softcap/ALiBi/dropout kernels at s = 512, 2048 and 16384
#     (the table's kGeneral-only rows against the long rows' shape), and d64/d128 table rows;
#  3. FA2 (SDPA FLASH_ATTENTION) bf16 with dropout at the same seqlens, and fp16, in the same run.
out=/tmp/sm80c-out3
source "$(dirname "${BASH_SOURCE[0]}")/sm80_device_common.sh"

stamp "build"
build_tests . build/gpu ""
stamp "build rc=$?"; grep -m5 -A6 " error" "$out/build.log"
cat >/tmp/d256_candidates.json <<'EOF'
[
  {"m_tiles_per_warp": 1, "warps": 8, "block_n": 64, "stages": 2, "q_in_registers": false, "min_blocks_per_sm": 1, "head_dims": [256]},
  {"m_tiles_per_warp": 1, "warps": 4, "block_n": 64, "stages": 1, "q_in_registers": false, "min_blocks_per_sm": 2, "head_dims": [256]}
]
EOF
tune_build_background /tmp/d256_candidates.json
run_suites build/gpu/tests/flashattn_tests "" memcheck racecheck
wait $tune_build
stamp "tune build rc=$?"
bin=$tune_bin
record_ptxas

stamp "d256 rows"
SM80_DIMS=256 SM80_GENERAL_SEQLEN=512,2048,16384 timeout 110 "$bin" 512,1024,2048,4096,8192,16384 \
  >"$out/d256_rows.jsonl" 2>&1
stamp "d256 rows rc=$?"
SM80_DIMS=64,128 SM80_NO_CANDIDATES=1 timeout 60 "$bin" 512,1024,2048,4096,8192,16384 >"$out/d64_128_rows.jsonl" 2>&1
stamp "d64/d128 rows rc=$?"
timeout 60 python3 bench/sdpa_fa2_forward.py 64,128,256 512,2048,16384 bf16 >"$out/fa2.jsonl" 2>&1
stamp "fa2 bf16 rc=$?"
timeout 40 python3 bench/sdpa_fa2_forward.py 64,128,256 0 fp16 >"$out/fa2_fp16.jsonl" 2>&1
stamp "fa2 fp16 rc=$?"
cat "$out/d256_rows.jsonl" "$out/d64_128_rows.jsonl" >"$out/rows.jsonl"
python3 bench/compare_fa2.py --tune "$out/rows.jsonl" --table src/cuda/sm80/forward_tuning.json \
  "$out/fa2.jsonl" "$out/fa2_fp16.jsonl" >"$out/compare.md" 2>&1
stamp done
tar -czf "$final/sm80c3.tgz" -C "$out" .
cp "$out/run.txt" "$out/compare.md" "$final/" 2>/dev/null
