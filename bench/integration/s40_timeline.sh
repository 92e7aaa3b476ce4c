#!/usr/bin/env bash
# Session 40 (issue 6): where a launch's SM time goes at the rows below or near the FA3 anchor: d256 causal 4k (below
# in every standing: 0.986 / 0.991 / 0.977), d256 non-causal 4k / 8k, d128 non-causal 4k and causal 4k. A CLI build
# of this tree with s40_timeline.patch (tile_trace.h: the global timer per consumer warpgroup at its start and end
# and at each tile's first S and epilogue end, into the workspace's last MiB, dumped by the CLI under
# FLASHATTN_TAIL_TRACE; trace_cli_build), d128 and d256 bf16; one traced launch per row (the last of 5), read by
# bench/timeline_trace.py.
# Prediction: d256 causal 4k (static couples, 512 couples on 132 CTAs: 3.88 rounds) idles ~3% of its span after the
# loop ends; the non-causal rows ~1-2% (7.76 rounds at d256, the split tail at d128).
# One H200 call (~2 minutes).
#   bash bench/integration/s40_timeline.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s40l
tree_copy "$bld/tl-tree" bench/integration/s40_timeline.patch
TRACE_DIMS="128;256" trace_cli_build "$bld/tl-tree"
for row in "256 1 4096" "256 0 4096" "256 0 8192" "128 0 4096" "128 1 4096"; do
  read -r d causal s <<<"$row"
  b=$((16384 / s))
  flags=(-b "$b" --heads $((2048 / d)) --seqlen-q "$s" --seqlen-k "$s" --head-dim "$d")
  [[ $causal == 1 ]] && flags+=(--causal)
  {
    echo "== d$d causal $causal $s (b $b)"
    FLASHATTN_TAIL_TRACE=$bld/trace.bin timeout 60 "$bld/cli/tools/cli/flashattn" run --backend cuda_sm90 \
      --repeat 5 --verify none "${flags[@]}" 2>&1 | grep -E "^(kernel|time|speed)"
    python3 bench/timeline_trace.py "$bld/trace.bin" 2>&1
  } >>"$out/summary.txt"
  log "row $row"
done
log total
