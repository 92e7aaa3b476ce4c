#!/usr/bin/env bash
# Prepared in session 60, not run: the backward's preprocess and postprocess walk the scratch rows last to first
# (s61_aux_reverse.patch, FLASHATTN_SM80_BWD_AUX_REVERSE), so that the rows the main kernel starts with (dO, the
# zeroed dQ accumulator) and the rows it added to last are in L2 when the next kernel reads them (the 128 MB
# accumulator of a 16k-token d128 call is larger than L2). Both CUDA backends run these kernels. Predicted: 2-3%
# less time at 512-1k tokens on both backends, ~1% at 2k. The backward suites on both backends first.
#   bash bench/integration/s61_aux_reverse.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s61a
tests_and_base_around_patch bench/integration/s61_aux_reverse.patch "64;128" -DFLASHATTN_BACKWARD=ON || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm*:*DeterminismTest.Backward*cuda_sm*' 200
backward_compare_vs_base aux 200 --hdims 128,64 --seqlens 512,1024,2048 --rounds 2 --settle-ms 100 \
  --backends cuda_sm90,cuda_sm80 --base-backends cuda_sm90,cuda_sm80
log total
