#!/usr/bin/env bash
# Session 25, on an H100 (nvidia-h100-x1), the last ~6 minutes of device time: session 25's new defaults (MASK_FORM_OTHER
# 2, DECODED_HANDOFF 1 = d64, KV_MULTICAST_MIN_SEQLEN 0) against the old ones, paired timing, d64 / d128 / d192 /
# d256, causal and not, 512..16k, two passes (results appended pass by pass, so a cut-off call still returns the
# first). Prediction: as on the H200 (s25_defaults.sh) within 1%, except the d128 multicast rows (non-causal 2k-16k),
# where the H100's lower power cap may favour the multicast's smaller L2 traffic: -2..+3%.
#   bash bench/integration/s25_h100.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s25h
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
old="-DFLASHATTN_SM90_MASK_FORM_OTHER=0 -DFLASHATTN_SM90_DECODED_HANDOFF=0 -DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=2048"
PY_DIMS="64;128;192;256" sm90_build_py old "$old" 8 400 &
PY_DIMS="64;128;192;256" sm90_build_py new "" 8 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy old
paired_passes old,new,ctrl 128,64,192,256 1,0 512,1024,2048,4096,8192,16384 1 60
paired_summary old new ctrl
paired_passes old,new,ctrl 128,64,192,256 1,0 512,1024,2048,4096,8192,16384 1 60
paired_summary old new ctrl
log total
