#!/usr/bin/env bash
# Session 66, third call: D192X128_BALANCED (backward_config.h, default 1 in the tree): the (d, dv) = (192, 128)
# consumers' columns balanced, 96 of dK + 64 of dV against 32 + 64 of dK + 64 of dV (a 32-column piece read from
# inside a chunk: the B operand's start 64 bytes into the swizzled rows), where the 64-column chunks gave 192
# against 128 and the consumers meet every step. Predicted from a per-step critical path of the larger
# consumer's GEMMs: 0.93-0.97x the time at (192, 128), d192 and d256 unchanged (the columns now BackwardColumns
# pieces; one piece each there).
# 1. Every CUDA backward suite (the 192x128 grid cases check the pieces' columns); synccheck / racecheck over the
#    d192 and d256 grid cases, memcheck over d192's.
# 2. d256 against the tree before the session (s66_balanced_pre.patch reversed): predicted level.
# 3. 192x128 and d192 against D192X128_BALANCED=0 (flashattn_unbal), beside cuda_sm80 and cuDNN.
#   bash bench/integration/s66_balanced.sh
# Run (session 66, e82735e): suites 173 passed (49 skipped; the 32-column piece read from inside a chunk gave
# correct dK), synccheck / racecheck clean over 19 d192 / d256 grid cases, memcheck over 10 d192 ones. Balanced
# against BALANCED=0 (time): 192x128 non-causal 1k / 2k / 4k / 16k 1.062 / 1.031 / 1.021 / 1.011, causal
# 1.057 / 1.021 / 1.001 / 1.019; d192 0.984-1.005 (unchanged code path). Wrong prediction: the consumers' GEMM
# column counts are not what a step waits for. Not kept: the commit reverted, its change kept as
# s66_balanced.patch (applies to the tree at e82735e's parent). d256 against the tree before the session:
# 0.997-1.023x the time. Record: s66_balanced_summary.txt, s66_balanced.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s66b
split_column_call bench/integration/s66_balanced_pre.patch unbal "-DFLASHATTN_SM90_BWD_D192X128_BALANCED=0" || exit 1
(PYTHONPATH=$bld/pyroot timeout 200 python3 bench/backward_compare.py --base-package flashattn_unbal \
  --hdims 192x128,192 --seqlens 1024,2048,4096,16384 --rounds 2 --settle-ms 100 --check-max-seqlen 2048 \
  --backends cuda_sm90,cuda_sm80 --base-backends cuda_sm90 --out "$out/balanced.json" >"$out/balanced.jsonl" \
  2>"$out/balanced.err")
log "balanced rc=$? $(grep -v Warning "$out/balanced.err" | tail -2 | cut -c1-300)"
python3 bench/backward_ab_table.py "$out/balanced.jsonl" >>"$out/summary.txt"
log total
