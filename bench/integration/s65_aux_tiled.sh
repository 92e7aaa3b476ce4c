#!/usr/bin/env bash
# Session 65: AUX_TILED (backward_aux_kernels.h, default 1 in the tree): the backward's preprocess and
# postprocess (shared by cuda_sm80 and cuda_sm90) as one CTA per 64 scratch rows of a (sequence, head), the
# sequence's lengths read once a CTA, no 64-bit division a thread, all of a CTA's loads in flight before the
# first use, the dQ accumulator zeroed as one block (and only up to the sequence's last 128-row tile). Against
# the tree with it off (the grid-stride kernels): every CUDA backward suite (the workspace is 0xFF-filled, so an
# accumulator row left unzeroed shows as NaN), memcheck over the varlen backward grid cases, the kernels' own
# times (torch.profiler, both builds' calls interleaved), then whole calls on both backends. Predicted: the
# preprocess 0.75-0.85x its time (81 us at ncu's clocks for 256 MB: 3.3 TB/s), the postprocess 0.90-0.97x;
# whole calls 0.96-0.98x at 512 tokens, 0.98-0.99x at 2k.
#   bash bench/integration/s65_aux_tiled.sh
# First run (session 65, e807538): suites 145 passed, memcheck clean over 37 varlen cases; kernel times (us,
# base -> tiled): preprocess d64 / d128 75 -> 70 / 73 -> 71 on both backends, d256 60 -> 64 (cuda_sm90, no
# accumulator) and 73 -> 90 (cuda_sm80); postprocess 49 -> 49.5; whole calls 0.98-1.00x. The LSE load of each
# pass waited behind that pass's sums (eight dependent round trips a CTA at d256). Second run (52cd0b3, every
# LSE loaded with the rows' dO / O, d256 in the whole-call rows): suites 141 passed, memcheck
# clean; preprocess 75 -> 68-69 us at d64, 73.7 -> 67 at d128, 60 -> 38 at d256 on cuda_sm90, 74 -> 68 on
# cuda_sm80; postprocess 48.5 -> 49.5 (worse); whole calls cuda_sm90 0.98-0.99x (d256 0.965-0.985x), cuda_sm80
# 0.985-1.00x. Kept: the tiled preprocess (the switch and the grid-stride preprocess removed afterwards, so
# this script's base flag no longer exists in the tree); not kept: the tiled postprocess. Records:
# s65_aux_tiled_summary.txt, s65_aux_tiled.jsonl, s65_aux_times.jsonl (second run), s65_aux_times_first.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s65t
tree_and_flag_base "64;128;256" "-DFLASHATTN_SM80_BWD_AUX_TILED=0" -DFLASHATTN_BACKWARD=ON
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda*varlen*:-*dropout*' 120 memcheck
(PYTHONPATH=$bld/pyroot timeout 150 python3 bench/backward_aux_times.py --packages flashattn,flashattn_base \
  --backends cuda_sm90,cuda_sm80 --hdims 64,128,256 --seqlens 512,2048 --calls 10 >"$out/aux_times.jsonl" \
  2>"$out/aux_times.err")
log "aux times rc=$? $(tail -2 "$out/aux_times.err" | cut -c1-300)"
backward_compare_vs_base aux_tiled 250 --hdims 64,128,256 --seqlens 512,1024,2048 --rounds 2 --settle-ms 100 \
  --check-max-seqlen 1024 --backends cuda_sm90,cuda_sm80 --base-backends cuda_sm90,cuda_sm80
log total
