#!/usr/bin/env bash
# Prepared in session 24, not run: existing d256 switches re-read with interleaved timing (sm90r_ab.py --paired; see
# s25_sweep128.sh). Earlier readings (do_bench, ~4% resolution): CONSUMER_KEY_RANGE=0 at causal within noise (15),
# KV_MULTICAST_D256_CAUSAL=8192 (17 chose 2k), KV_MULTICAST_D256=4096 ("slower", 17), 64-key blocks with placement to
# causal 4k 1.006 (23), 64-key unmasked blocks to 1k 0.997 (23), SECTION_L2_DIVISOR_OTHER=4 (16: DRAM halved, time
# even), TILE_MASK_RANGE=2 / MASK_FORM_OTHER=2 (24, one paired pass: -0.5..0% / +0.4..+0.5% causal 1k-4k).
# Prediction: each within +-1%. Three passes, d256 causal and not, 512-16k. Ask for an H200.
#   bash bench/integration/s25_sweep256.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s25x
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
b64m="-DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=4096 -DFLASHATTN_SM90_PLACEMENT_MAX_SEQLEN=4096"
PY_DIMS=256 sm90_build_py base "" 2 400 &
PY_DIMS=256 sm90_build_py ckr0 "-DFLASHATTN_SM90_CONSUMER_KEY_RANGE=0" 2 400 &
PY_DIMS=256 sm90_build_py mcc8k "-DFLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=8192" 2 400 &
PY_DIMS=256 sm90_build_py mcu4k "-DFLASHATTN_SM90_KV_MULTICAST_D256=4096" 2 400 &
PY_DIMS=256 sm90_build_py b64m "$b64m -DFLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=4097" 2 400 &
PY_DIMS=256 sm90_build_py b64u "-DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN=1024" 2 400 &
PY_DIMS=256 sm90_build_py seco4 "-DFLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER=4" 2 400 &
PY_DIMS=256 sm90_build_py mfo2 "-DFLASHATTN_SM90_MASK_FORM_OTHER=2" 2 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy
builds=base,ctrl,ckr0,mcc8k,mcu4k,b64m,b64u,seco4,mfo2
for pass in p1 p2 p3; do
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 150 python3 bench/sm90r_ab.py --builds $builds --hdims 256 \
    --causal 1,0 --seqlens 512,1024,2048,4096,8192,16384 --rep 30 --paired 30 --paired-only 2>&1 |
    grep -v Warning | sed "s/^{/{\"pass\": \"$pass\", /" >>"$out/ab.jsonl"
  log "ab $pass"
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base ctrl ckr0 mcc8k mcu4k b64m b64u seco4 mfo2 |
  sed -n '/^paired/,$p' | tee -a "$out/summary.txt"
log total
