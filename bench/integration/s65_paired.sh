#!/usr/bin/env bash
# Session 65: PAIRED_TILES (backward_config.h, default 1 in the tree): where the two-consumer backward kernels
# ran one CTA per tile (a causal or window band, varlen, seqused), one CTA per two tiles of a (sequence, K/V
# head), key blocks j and n_blocks - 1 - j (the longer first), so that under a causal band every CTA has about
# the same work and the second tile starts in a running CTA (the session's trace of d128 causal 512: a CTA's
# first step 3.6 us against 2.1, the K / V wait 1.1 us; 2048 CTAs of ~14 us covered 72% of the span). Against
# the tree built with PAIRED_TILES=0: the cuda_sm90 first cases and backward suites (varlen, windows, seqused,
# the masked d64 kernel over two tiles a CTA), synccheck and racecheck over the cuda_sm90 grid cases, then d64 /
# d128 causal at 512-4k and non-causal 512 (the control: uniform tiles, persistent in both builds). Predicted:
# causal 0.93-0.97x the time at 512-1k, 0.97-1.0x at 2k-4k; the control level.
#   bash bench/integration/s65_paired.sh
# Result (session 65, run on the commit that added it, H200): NOT KEPT, level. d64 causal 512 / 1k 1.013 /
# 1.000x the time, d128 causal 512-4k 0.997-1.007x; the controls (the same kernels in both builds: non-causal
# 512, d64 causal 2k / 4k on three consumers) 1.012-1.027x. First cases 62, suites 56 passed, synccheck and
# racecheck clean over 36 cases. Its code (with 8 bytes of producer-region spill in the d64 / d128 two-consumer
# kernels) is s65_paired.patch; the tree reverted to the kernels s65_skip_masked.sh verified. Records:
# s65_paired_summary.txt, s65_paired.jsonl, s65_paired_control.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s65p
tree_and_flag_base "64;128" "-DFLASHATTN_SM90_BWD_PAIRED_TILES=0" -DFLASHATTN_BACKWARD=ON
backward_sm90_first_cases 120
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*:Api.*' 120
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*:-*dropout*:*2048x2048*' 100 synccheck racecheck
backward_compare_vs_base paired 120 --hdims 64,128 --seqlens 512,1024,2048,4096 --causal 1 --rounds 2 \
  --settle-ms 100 --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
backward_compare_vs_base paired_control 40 --hdims 64,128 --seqlens 512 --causal 0 --rounds 2 --settle-ms 100 \
  --check-max-seqlen 512 --backends cuda_sm90 --base-backends cuda_sm90
log total
