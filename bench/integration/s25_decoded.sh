#!/usr/bin/env bash
# Prepared in session 24, not run: the decoded tile handoff (FLASHATTN_SM90_DECODED_HANDOFF=1, default 0; dense
# K/V kernels only). The producer, which decodes every tile for its own loads, hands the consumers the WorkTile and
# key-block range (48 bytes, three st.shared.v4) instead of the index, so that each consumer warp no longer decodes
# the tile again (d128 cluster kernel, local SASS: 3864 -> 3656 static instructions; between the handoff wait and
# the Q wait ~100 uniform-datapath instructions become two LDS.128 and an LDS.64). Default cubins are byte-identical;
# with the switch every TU compiles, the consumers spill nothing (the paged kernels keep the index-only handoff:
# their consumers spilled in the key-block loop with it), the producers 4-10 B as the dense producer does. Session 5
# read an earlier form within do_bench's noise. Prediction: d128 non-causal 4k +0.3..+1%, the longer rows +0..+0.3%,
# causal short rows the most. One call (H200): suites for d64 / d96 / d128 / d256 with the switch (fp16 + bf16),
# racecheck and synccheck on the multicast spread cases, synccheck on small forward cases, float64-checked CLI runs
# (varlen with sequence maps, packed GQA, paged, window), then three paired passes over d64 / d128 / d256.
#   bash bench/integration/s25_decoded.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s25d
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
flags="-DFLASHATTN_SM90_DECODED_HANDOFF=1"
test_cli_build "64;96;128;256" "fp16;bf16" 8 "$flags" &
PY_DIMS="64;128;256" sm90_build_py base "" 4 400 &
PY_DIMS="64;128;256" sm90_build_py dh "$flags" 4 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
multicast_checks 200
synccheck_on '*ForwardTest*cuda_sm90*128x217*' 90
cli_runs "--head-dim 128 --causal --varlen --seqlen-q 4096 -b 3 --heads 8 --heads-kv 2" \
  "--head-dim 128 --seqlen-q 1 --seqlen-k 8192 -b 8 --heads 32 --heads-kv 8 --paged 64" \
  "--head-dim 64 --window 300,0 --seqlen-q 4096 -b 2 --heads 8 --dtype fp16" \
  "--head-dim 256 --causal --seqlen-q 1500 --seqlen-k 2048 -b 2 --heads 8 --softcap 30 --sink" \
  "--head-dim 96 --causal --varlen --seqlen-q 2048 -b 3 --heads 8 --dtype fp16"
cli_summary
sm90_ctrl_copy
paired_passes base,dh,ctrl 128,64,256 1,0 512,1024,2048,4096,8192,16384 3 100
paired_summary base dh ctrl
log total
