#!/usr/bin/env bash
# Session 61: the d = 256 backward's dQ staged in the stage's own Q / dO chunks (DQ_BULK layout) and added by one
# bulk reduction per half row (FLASHATTN_SM90_BWD_D256_DQ_BULK=1) instead of red.global.add.v4.f32 from registers
# (s61_d256ab.sh: without any dQ adds the kernel ran 1.6-2.0x faster). The test binary and package flashattn are
# built with it (the postprocess reads DQ_BULK then); base: the tree (flashattn_base, atomics, DQ_FIRST).
# Local ptxas: no spills. Predicted: 0.65-0.80x the time of the tree. The d256 cases, drawn cases and racecheck
# first. Run (session 61) on the tree with s61_d256bulk.patch applied: tests passed (7), racecheck clean, 1.02-1.04x
# the time of the atomics: not kept, the switch removed (apply the patch to run this again).
#   bash bench/integration/s61_d256bulk.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s61b
PY_DIMS=256 sm90_build_py base "" 5 300 -DFLASHATTN_BACKWARD=ON &
TREE_CUDA_FLAGS="-DFLASHATTN_SM90_BWD_D256_DQ_BULK=1" tests_and_py_build "256"
wait
first_cases 'Grid/BackwardTest.*cuda_sm90_*_d256_*:Random/BackwardRandomTest.*cuda_sm90*' 60
[[ $? == 124 ]] && exit 1
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d256_*:-*_det*:*dropout*:*2048x2048*:*700*:*517x300*' 50 racecheck
(PYTHONPATH=$bld/pyroot timeout 60 python3 bench/backward_compare.py --base-package flashattn_base \
  --hdims 256 --seqlens 1024,4096,16384 --rounds 2 --settle-ms 100 --check-max-seqlen 1024 \
  --backends cuda_sm90 --base-backends cuda_sm90 >"$out/bulk.jsonl" 2>"$out/bulk.err")
log "compare rc=$? $(tail -2 "$out/bulk.err" | cut -c1-300)"
log total
