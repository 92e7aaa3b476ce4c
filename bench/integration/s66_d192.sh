#!/usr/bin/env bash
# Session 66: the Hopper backward at d = dv = 192 and (d, dv) = (192, 128) (MLA training, user-needs #1487): the
# d = 256 split-column kernel and dQ pass generalised (BackwardConfig::kHeadDimV; each consumer's dK / dV columns
# as 64-column chunks, key_chunk_begin / value_chunk_begin: 2 + 1 against 1 + 2 at d = 192, 2 + 1 against 1 + 1
# at (192, 128); the consumer an instance per index). Before this, those calls ran on cuda_sm80.
# 1. Every CUDA backward suite (the new grid cases: 3 at d = 192, 4 at (192, 128); drawn cases now draw both;
#    DeterminismTest.BackwardVarlenD192), racecheck / synccheck / memcheck over the d192 grid cases, the Python
#    interface tests.
# 2. d = 256 against the tree before (s66_d192.patch reversed; the consumer now two instances, the loads and
#    stores written per chunk count): predicted level (0.98-1.02x the time).
# 3. d192 and 192x128 on cuda_sm90 beside cuda_sm80 and SDPA (cuDNN; SDPA's FA2 refuses dv != d): predicted
#    1.5-2x cuda_sm80, 0.85-1.05x cuDNN (d256 is 1.04-1.25x cuDNN; d192's dQ traffic per FLOP is the same form).
#   bash bench/integration/s66_d192.sh
# Run (session 66, b7c8fa6): suites 171 passed, racecheck and memcheck clean over 10 d192 grid cases, pytest
# interface 60 passed; synccheck: 1152 errors, divergent threads at the zeroing's and the staging's bar.sync (the
# consumers two instances, each with its own bar.sync instruction; .aligned wants one). d256 1.017-1.046x the time
# of the tree before (its consumers two instances as well). d192: 1.09-1.26x cuDNN, 1.35-1.85x cuda_sm80;
# 192x128 non-causal 1.16-1.19x cuDNN, causal 0.76-0.87x (cuDNN's causal kernel reads 1.5x its non-causal
# TFLOP/s there); 1.6-2.0x cuda_sm80. Fixed in s66_d192b.sh. Record: s66_d192_summary.txt.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s66d
tree_copy "$bld/base-tree" bench/integration/s66_d192.patch -R || exit 1
(cd "$bld/base-tree" && PY_DIMS="256" sm90_build_py base "" 6 400 -DFLASHATTN_BACKWARD=ON) &
tests_and_py_build "64;128;192;256"
wait
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 240
grep -E '^\[ +(OK|SKIPPED) +\].*(d192|D192)' "$out/tests.log" | cut -c1-160 >>"$out/summary.txt"
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d192_*' 150 racecheck synccheck memcheck
py_tests_on_gpu test_interface.py
backward_compare_vs_base d256 120 --hdims 256 --seqlens 1024,4096,16384 --rounds 2 --settle-ms 100 \
  --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
(PYTHONPATH=$bld/pyroot timeout 200 python3 bench/backward_compare.py --hdims 192,192x128 \
  --seqlens 512,1024,2048,4096,8192,16384 --rounds 2 --settle-ms 100 --check-max-seqlen 2048 \
  --backends cuda_sm90,cuda_sm80 --out "$out/d192.json" >"$out/d192.jsonl" 2>"$out/d192.err")
log "d192 rc=$? $(tail -2 "$out/d192.err" | cut -c1-300)"
python3 bench/backward_ab_table.py "$out/d192.jsonl" >>"$out/summary.txt"
log total
