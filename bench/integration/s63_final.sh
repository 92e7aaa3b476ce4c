#!/usr/bin/env bash
# Session 63, the final call. SKIP_HIDDEN's second form, its buffers fixed (s63_skip2.sh failed seven causal /
# windowed d64 cases: a consumer's passed steps broke the alternation of its staged dQ tiles, whose buffer
# followed the step), beside the tree without it (package flashattn_base, d64). Then, on the tree with it, every
# CUDA backward grid case, the drawn and determinism cases, Api and the robustness suites, pytest's interface
# tests; racecheck, synccheck and memcheck over the d64 grid cases; and the standing of the kernels this session
# changed (d64: STAGES3, SKIP_HIDDEN; d256: OWN_FIRST) beside cuDNN and cuda_sm80.
#   bash bench/integration/s63_final.sh
# (Run in session 63: the suites (143) and pytest (60) passed, racecheck and memcheck clean, synccheck reported
# the passed steps at the zeroing barrier; causal d64 0.936 / 0.933x, non-causal 1.071 / 1.086x: not kept. Records:
# s63_final_*.jsonl.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s63f
PY_DIMS=64 sm90_build_py base "" 4 400 -DFLASHATTN_BACKWARD=ON &
TREE_CUDA_FLAGS="-DFLASHATTN_SM90_BWD_SKIP_HIDDEN=1" tests_and_py_build "64;128;256"
wait
rm -f "$out"/py_*_configure.log
first_cases 'Grid/BackwardTest.*cuda_sm90_*_d64_*' 60 || exit 1
common=(--rounds 2 --settle-ms 100 --check-max-seqlen 1024)
backward_compare_vs_base skip 100 --hdims 64 --seqlens 512,1024,2048 "${common[@]}" --backends cuda_sm90 \
  --base-backends cuda_sm90
backward_compare_vs_base skip_softcap 50 --hdims 64 --seqlens 512,1024 --causal 1 --softcap 30 "${common[@]}" \
  --backends cuda_sm90 --base-backends cuda_sm90
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 240
py_tests_on_gpu test_interface.py
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d64_*:-*dropout*' 100 racecheck synccheck memcheck
(PYTHONPATH=$bld/pyroot timeout 120 python3 bench/backward_compare.py --hdims 64,256 --seqlens 1024,4096,16384 \
  "${common[@]}" --backends cuda_sm90,cuda_sm80 >"$out/standing.jsonl" 2>"$out/standing.err")
log "standing rc=$? $(tail -1 "$out/standing.err" | cut -c1-200)"
cp "$out/pytest.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
