#!/usr/bin/env bash
# Session 48 (issue 6): where a short decode's fixed time goes, inside the prepare kernel and the combine
# (s48_trace.patch: s47_narrowtrace.patch, plus the prepare kernel's thread 0 as list 500 and the combine's per
# batch of pieces as lists 256 + CTA; bench/decode_trace.py), on the narrow tile at d128 (GQA 32/8) and d256
# (16/8) with the automatic split count and with 8 pieces; then the split-count sweep of d256 narrow rows of 1-16
# tiles (s46_dims_rule.py FLASHATTN_DIMS_ROWS=narrow256tiles) on the tree's extension.
# Prediction: the combine's batches take one L2 round trip each (~0.7-1 us: 2 at 8 pieces, 4 at 16 d128, 8 at 16
# d256), the prepare kernel's maps ~0.5 us after its entry; 8 pieces beat 16 at d256 wherever tiles >= 8.
#   bash bench/integration/s48_trace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s48t
decode_trace_build bench/integration/s48_trace.patch "128;256" 9 &
PY_DIMS=256 sm90_build_py new "" 7 300
wait
for run in 1024:1:128:0:32 16384:1:128:0:32 4096:1:256:0:16 4096:1:256:8:16 16384:1:256:0:16 16384:1:256:8:16; do
  IFS=: read -r keys batch d splits hq <<<"$run"
  {
    echo "== d$d keys $keys batch $batch splits $splits q heads $hq"
    timeout 60 "$bld/trace" "$keys" "$batch" kvcache "$bld/trace.bin" "$d" "$splits" "$hq"
    timeout 60 python3 bench/decode_trace.py "$bld/trace.bin" --ctas 1
  } >>"$out/summary.txt" 2>&1
  log "run $run"
done
split_sweep narrow256tiles 150 splits256tiles
log total
