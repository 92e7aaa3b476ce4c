#!/usr/bin/env bash
# Session 46 (issue 6): the two levers s46_decodetrace.sh pointed at in the split-KV decode kernel, A/B in one
# process (s46_decode_ab.py: graphed decode steps, GQA 32/8, d128, bf16, batch 1-8, 1024-65536 keys, three
# interleaved rounds, SDPA's FA2 and cuDNN beside):
#  - base: HEAD before s46_decode.patch;
#  - fr: the combine of few rows slot by slot over all 128 threads, 16 pieces' loads at once (split_kv.h
#    combine_few_rows), two K/V stages (-DFLASHATTN_SM90_DECODE_STAGES=2);
#  - new: that and three K/V stages.
# Prediction: fr saves ~1.2 us at 8 pieces a tile (1024 keys b1, 4096 b1-2) and ~2.3 us at 16 (16384 / 65536 b1)
# (the trace's 2.0 / 3.1 us combine down to one round trip); new another 1-3 us where pieces hold 4+ blocks
# (4096+ keys), less at batch 8 (more of the GPU's bandwidth in use).
# One H200 call (~5 minutes).
#   bash bench/integration/s46_decode_ab.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s46a
tree_copy "$bld/base-tree" bench/integration/s46_decode.patch -R
(cd "$bld/base-tree" && sm90_build_py base "" 5 300) &
sm90_build_py fr "-DFLASHATTN_SM90_DECODE_STAGES=2" 5 300 &
sm90_build_py new "" 5 300 &
wait
rm -f "$out"/py_*_configure.log
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 300 python3 s46_decode_ab.py base fr new) 2>&1 |
  grep -v Warning >"$out/decode_ab.jsonl"
log "decode A/B rc=$?"
ab_summary "$out/decode_ab.jsonl"
log total
