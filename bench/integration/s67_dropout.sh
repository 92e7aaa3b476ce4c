#!/usr/bin/env bash
# Session 67: dropout on the Hopper backward (the general kernels, BackwardConfig::kGeneral; the forward's
# Philox mask regenerated per step, its drop bits exchanged between the lanes that share a Philox call:
# backward_dropout.h), first call.
# 1. The tree's tests and extension (d 64 / 128 / 192 / 256): every CUDA backward suite, with the new dropout
#    grid cases on cuda_sm90 (all five kernel shapes), DeterminismTest.BackwardDropoutD64, Api's routing.
# 2. racecheck / synccheck over the cuda_sm90 dropout cases.
# 3. bench/backward_compare.py --dropout 0.1 (bf16, standard grid): cuda_sm90 beside cuda_sm80 (the path dropout
#    took before) and SDPA's backends where they take dropout; then the same rows without dropout (the cost).
#    Predicted: cuda_sm90 with dropout 1.2-1.5x the time of its plain kernel (4 Philox calls a thread a step),
#    1.3-1.8x the speed of cuda_sm80 with dropout.
# 4. pytest's interface tests on the GPU (test_dropout_matches_philox_mask's backward now on cuda_sm90).
#   bash bench/integration/s67_dropout.sh
# Run (e7419a9): suites 190 passed (48 skipped), racecheck / synccheck clean over 10 cuda_sm90 dropout cases,
# pytest 68 passed. With dropout 0.1: cuda_sm90 d64 129-195 TFLOP/s (0.57-0.62x cuDNN's dropout, 0.79-0.83x SDPA's
# FA2), d128 204-335 (0.76-0.80x cuDNN, 1.1-1.2x FA2), d256 193-292 (0.84-1.15x cuDNN); 2.0-3.3x cuda_sm80's
# (51-145: one Philox call per element). Against its own plain kernel 1.4-2.0x the time (predicted 1.2-1.5x).
# Record: s67_dropout_summary.txt, s67_dropout_p01.jsonl, s67_dropout_p0.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s67d
tests_and_py_build "64;128;192;256"
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*dropout*:*DeterminismTest.BackwardDropout*cuda_sm90*' 100 \
  racecheck synccheck
for p in 0.1 0.0; do
  (PYTHONPATH=$bld/pyroot timeout 120 python3 bench/backward_compare.py --hdims 64,128,256 \
    --seqlens 1024,4096,16384 --dropout "$p" --rounds 2 --settle-ms 100 --check-max-seqlen 1024 \
    --backends cuda_sm90,cuda_sm80 --out "$out/dropout$p.json" >"$out/dropout$p.jsonl" 2>"$out/dropout$p.err")
  log "compare dropout $p rc=$? $(grep -v Warn "$out/dropout$p.err" | tail -2 | cut -c1-300)"
  python3 bench/backward_ab_table.py "$out/dropout$p.jsonl" >>"$out/summary.txt"
done
py_tests_on_gpu test_interface.py
log total
