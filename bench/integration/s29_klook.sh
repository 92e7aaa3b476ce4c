#!/usr/bin/env bash
# Prepared in session 28, not run: K_LOOKAHEAD=1 (forward_config.h; every dense producer issues each key block's K
# before the previous block's V, as the d256 O-over-V kernels do). In those kernels the change from K, V per block
# to this order read d256 non-causal 512 / 1k 1.014 / 1.014 -> 1.044 / 1.021 of the old kernel (s28_oov2 against
# s28_oov3, paired). Local SASS: the default cubins are byte-identical with the switch off; on, no new spills in
# the consumers. Steps: tests / CLI with the switch (d64 / d128 / d256, fp16 + bf16), the suites, racecheck and
# synccheck on the K/V multicast cases (their producers take the new order too), the Python extensions base and kl
# (d64 / d128 / d256), then paired timing base / ctrl / kl, three passes: d128 non-causal and causal 512..4k (the
# rows below cuDNN or the FA3 anchor), d64 non-causal 512 / 1k, d256 causal 1k / 4k (the masked instances).
# Prediction: +-0.5% everywhere. Session 18 dropped this order before a run (kernel notes: a consumer turn needs
# K(n - 1) and V(n) together, so which lands first should not matter); in the O-over-V kernels it paid because the
# tile's first V waits for an O store and the second K no longer queues behind it. A gain at d128 512 / 1k would
# mean the K-behind-V wait also costs at the tile boundary of the plain kernels.
# One H200 call (~6 minutes).
#   bash bench/integration/s29_klook.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s29k
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
flags="-DFLASHATTN_SM90_K_LOOKAHEAD=1"
switch_builds kl "$flags" "64;128;256" "64;128;256" 300
rm -f "$out"/py_*_build.log "$out"/tests_build.log
cli_or_stop "--head-dim 128 --causal --seqlen-q 8192 -b 1 --heads 16 --heads-kv 16" || exit 1
sm90_ctrl_copy
multicast_checks 150
cli_runs "--head-dim 128 --seqlen-q 512 -b 8 --heads 16 --heads-kv 16" \
  "--head-dim 128 --causal --seqlen-q 4096 -b 2 --heads 16 --heads-kv 4" \
  "--head-dim 256 --causal --seqlen-q 1500 -b 2 --heads 8 --heads-kv 2"
cli_summary
paired_passes base,ctrl,kl 128 0 512,1024,2048,4096 3 100
paired_passes base,ctrl,kl 128 1 512,1024,2048,4096 3 100
paired_passes base,ctrl,kl 64 0 512,1024 3 60
paired_passes base,ctrl,kl 256 1 1024,4096 3 60
paired_summary base ctrl kl
log total
