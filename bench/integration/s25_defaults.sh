#!/usr/bin/env bash
# Session 25: the three new defaults together, against the old ones (one H200 call).
#   - FLASHATTN_SM90_MASK_FORM_OTHER 0 -> 2 (s25_mask_form.sh: d64 causal +0.9..+3.0%, d192 causal +1.9..+3.1%);
#   - FLASHATTN_SM90_DECODED_HANDOFF 0 -> 1 = d64 kernels only (s25_decoded.sh: d64 +0.2..+2.0%, d128 -0.3..-3.2%);
#   - FLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN 2048 -> 8192 (s25_sweep128.sh: d128 non-causal 2k / 4k +3.2 / +2.3%).
# Prediction: d64 causal +1..+4%, d64 non-causal 0..+1%, d192 causal +2..+3%, d128 non-causal 2k / 4k +2..+3%, the
# rest within +-0.3%. Steps: GPU suites d64 / d96 / d128 / d192 / d256 fp16 + bf16 with the new defaults (the
# d128 multicast Spread cases now at 8300 keys), racecheck + synccheck on the multicast cases, float64-checked
# CLI runs; then paired timing old / new / control (old) over d64 / d128 / d192 / d256, causal and not, 512..16k,
# three passes; and d128 non-causal 8k / 16k with the multicast off (mc0) or from 16k (mc16k) against new.
#   bash bench/integration/s25_defaults.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s25c
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
old="-DFLASHATTN_SM90_MASK_FORM_OTHER=0 -DFLASHATTN_SM90_DECODED_HANDOFF=0 -DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=2048"
test_cli_build "64;96;128;192;256" "fp16;bf16" 8 "" &
PY_DIMS="64;128;192;256" sm90_build_py old "$old" 3 400 &
PY_DIMS="64;128;192;256" sm90_build_py new "" 3 400 &
PY_DIMS=128 sm90_build_py mc0 "-DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=0" 1 400 &
PY_DIMS=128 sm90_build_py mc16k "-DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=16384" 1 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
multicast_checks 240
synccheck_on '*ForwardTest*cuda_sm90*128x217*' 90
cli_runs "--head-dim 128 --seqlen-q 4096 -b 2 --heads 8 --heads-kv 2" \
  "--head-dim 64 --causal --varlen --seqlen-q 4096 -b 3 --heads 8 --heads-kv 2" \
  "--head-dim 64 --seqlen-q 1 --seqlen-k 8192 -b 8 --heads 32 --heads-kv 8 --paged 64" \
  "--head-dim 192 --head-dim-v 128 --causal --seqlen-q 2048 -b 2 --heads 8 --dtype fp16" \
  "--head-dim 256 --causal --seqlen-q 1500 --seqlen-k 2048 -b 2 --heads 8 --softcap 30 --sink"
cli_summary
sm90_ctrl_copy old
paired_passes old,new,ctrl 64,128,192,256 1,0 512,1024,2048,4096,8192,16384 3 100
paired_passes new,mc0,mc16k 128 0 8192,16384 3 60
paired_summary old new ctrl
paired_summary new mc0 mc16k
log total
