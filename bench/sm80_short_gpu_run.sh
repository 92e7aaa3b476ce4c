#!/usr/bin/env bash
# One device call for the cuda_sm80 forward at short sequences (session 3, issue 4):
#  1. build (sm_90, no backward) with the checked-in table; the cuda_sm80 forward suites, memcheck and
#     racecheck on the grid's odd shapes;
#  2. every table row on the standard grid (bench/sm80_tune with SM80_NO_CANDIDATES: cuda_sm80::run on
#     bf16 and fp16, the softcap/ALiBi/dropout kernels at s = 2048), FA2 bf16 and fp16 in the same run;
#  3. the per-query-tile fixed cost: ours and FA2 at seqlen_q 512 with 64..512 keys (non-causal);
#  4. ncu (a few sections) of ours and FA2 on d128 and d256, s = 512, non-causal.
# Everything under a work folder; the few files worth reading go to $OUT, the rest as one tarball.
out=/tmp/sm80c-out
source "$(dirname "${BASH_SOURCE[0]}")/sm80_device_common.sh"

stamp "build (checked-in table)"
build_tests . build/gpu ""
stamp "build rc=$?"; grep -m5 -A6 " error" "$out/build.log"
# The tuning harness (candidates compiled but not timed) builds beside the tests.
echo "[]" >/tmp/no_candidates.json
tune_build_background /tmp/no_candidates.json
run_suites build/gpu/tests/flashattn_tests "" memcheck racecheck
wait $tune_build
stamp "tune build rc=$?"
bin=$tune_bin
record_ptxas

stamp "table rows"
SM80_NO_CANDIDATES=1 timeout 90 "$bin" 512,1024,2048,4096,8192,16384 >"$out/table_rows.jsonl" 2>&1
stamp "table rows rc=$?"
timeout 45 python3 bench/sdpa_fa2_forward.py 64,128,256 2048 bf16 >"$out/fa2.jsonl" 2>&1
stamp "fa2 bf16 rc=$?"
timeout 40 python3 bench/sdpa_fa2_forward.py 64,128,256 0 fp16 >"$out/fa2_fp16.jsonl" 2>&1
stamp "fa2 fp16 rc=$?"
python3 bench/compare_fa2.py --tune "$out/table_rows.jsonl" --table src/cuda/sm80/forward_tuning.json \
  "$out/fa2.jsonl" "$out/fa2_fp16.jsonl" >"$out/compare.md" 2>&1

stamp "fixed cost"
for keys in 64 128 256; do
  SM80_TABLE_ONLY=1 SM80_CAUSAL=0 SM80_SEQLEN_K=$keys timeout 20 "$bin" 512 >>"$out/fixed_ours.jsonl" 2>&1
done
timeout 40 python3 bench/sm80_fa2_fixed_cost.py 64,128,256 512 64,128,256,512 >"$out/fixed_fa2.jsonl" 2>&1
stamp "fixed cost rc=$?"

stamp "ncu"
sections="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
  --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis"
for d in 128 256; do
  SM80_DIMS=$d SM80_TABLE_ONLY=1 SM80_CAUSAL=0 timeout 40 ncu $sections -k regex:forward_kernel --launch-skip 3 \
    --launch-count 1 "$bin" 512 >"$out/ncu_ours_d$d.txt" 2>&1
  FA2_PROFILE=1 timeout 40 ncu $sections -k regex:flash_fwd --launch-skip 2 --launch-count 1 \
    python3 bench/sm80_fa2_fixed_cost.py $d 512 512 >"$out/ncu_fa2_d$d.txt" 2>&1
  stamp "ncu d$d rc=$?"
done
stamp done
tar -czf "$final/sm80c.tgz" -C "$out" .
cp "$out/run.txt" "$out/compare.md" "$final/" 2>/dev/null
