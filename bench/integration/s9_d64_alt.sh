#!/usr/bin/env bash
# Session 9 integrator A/B (issue 6): the four-consumer d64 kernel of helper sm90r (use_d64_alt_tile, default for
# unmasked 1024 <= sq < 8192) on two rows it was not measured on: non-causal 512 (threshold moved to 512) and causal
# 4k (the masked variant on [4096, 8192); sm90r measured +3.3% there once). Builds (90a, bf16, d64, forward only):
#   base  the merged tree's defaults; installed again as ctrl (identical kernels: the noise floor)
#   alt   -DFLASHATTN_SM90_D64_ALT_MIN_SEQLEN=512 and the masked variant on for 4096 <= sq < 8192
# Rows: non-causal 512 / 1k (1k: both run the same kernel), causal 2k (same kernel) / 4k; two passes of
# bench/sm90r_ab.py (cuDNN in the same process, 200 ms settle, order rotated and reversed).
#   bash bench/integration/s9_d64_alt.sh   (from the repository root; results as one tar under $OUT)
set -uo pipefail
out=/tmp/s9alt-out
bld=/tmp/s9alt-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld"
trap 'tar -C /tmp -czf "${OUT:-/tmp}/s9alt-out.tgz" s9alt-out' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
sed -i 's/^set(FLASHATTN_SM80_GENCODE -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80)/set(FLASHATTN_SM80_GENCODE)/' \
  src/cuda/CMakeLists.txt
alt="-DFLASHATTN_SM90_D64_ALT_MIN_SEQLEN=512 -DFLASHATTN_SM90_D64_ALT_BLOCK_N_MASKED=64 -DFLASHATTN_SM90_D64_ALT_MIN_SEQLEN_MASKED=4096 -DFLASHATTN_SM90_D64_ALT_MAX_SEQLEN_MASKED=8192"
PY_DIMS=64 sm90_build_py base "" 8 170 &
PY_DIMS=64 sm90_build_py alt "$alt" 8 170 &
wait
rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctrl" &&
  sed -i 's/"flashattn_base::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py"
for pass in p1 p2; do
  builds=base,alt,ctrl; [[ $pass == p2 ]] && builds=ctrl,alt,base
  for rows in "0 512,1024" "1 2048,4096"; do
    set -- $rows
    PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 60 python3 bench/sm90r_ab.py --builds $builds --hdims 64 \
      --causal "$1" --seqlens "$2" --rep 50 2>&1 | grep -v Warning | sed "s/^{/{\"pass\": \"$pass\", /" | tee -a "$out/ab.jsonl"
  done
  log "pass $pass"
done
