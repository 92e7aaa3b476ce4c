#!/usr/bin/env bash
# Session 62, the final tree (the d = 256 dQ pass; the column-split main kernel without dQ): every CUDA backward
# grid case (cuda_sm80's preprocess now skips a missing accumulator), the drawn and determinism cases, Api and
# the robustness suites, pytest's interface tests; the d256 backward beside cuda_sm80, its deterministic mode and
# SDPA (plain and softcap 30); d256 training steps; and ncu's warp-state, scheduler and memory sections of the
# d256 main kernel (non-causal 16k), for the next session: what limits it (neither shared-memory reads,
# s62_gradsplit.sh, nor L2 traffic, s62_multicast.sh).
#   bash bench/integration/s62_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s62f
tests_and_py_build "64;128;256" || exit 1
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 240
py_tests_on_gpu test_interface.py
(PYTHONPATH=$bld/pyroot timeout 100 python3 bench/backward_compare.py --hdims 256 --seqlens 1024,4096,16384 \
  --rounds 2 --settle-ms 100 --check-max-seqlen 1024 --backends cuda_sm90,cuda_sm90:det,cuda_sm80 \
  >"$out/d256.jsonl" 2>"$out/d256.err")
log "d256 compare rc=$? $(tail -1 "$out/d256.err" | cut -c1-200)"
(PYTHONPATH=$bld/pyroot timeout 60 python3 bench/backward_compare.py --hdims 256 --seqlens 4096 --rounds 2 \
  --settle-ms 100 --check-max-seqlen 4096 --backends cuda_sm90,cuda_sm80 --softcap 30 \
  >"$out/d256_softcap.jsonl" 2>"$out/d256_softcap.err")
log "softcap compare rc=$? $(tail -1 "$out/d256_softcap.err" | cut -c1-200)"
(cd /tmp && PYTHONPATH=$bld/pyroot timeout 100 python3 "$OLDPWD/bench/training_step.py" --rounds 3 --dims 256 \
  >"$out/steps.jsonl" 2>"$out/steps.err")
log "steps rc=$? $(tail -1 "$out/steps.err" | cut -c1-200)"
(cd /tmp && PYTHONPATH=$bld/pyroot timeout 120 ncu --clock-control none --kernel-name regex:backward_kernel \
  --launch-count 1 --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
  --section ComputeWorkloadAnalysis python3 "$OLDPWD/bench/backward_kernel_times.py" --hdims 256 --seqlens 16384 \
  >"$out/ncu_main.txt" 2>"$out/ncu_main.err")
log "ncu sections rc=$? $(tail -1 "$out/ncu_main.err" | cut -c1-200)"
cp "$out/ncu_main.txt" "$out/pytest.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
