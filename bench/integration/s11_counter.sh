#!/usr/bin/env bash
# Session 11 (issue 6), one device call: the dynamic schedule's counter zeroed by a stream write (wv) against
# the memset launch (base), timed back to back and as CUDA graphs (s11_counter_loop.py), and the CUDA-graph
# pytest with the stream write installed as flashattn.
#   bash bench/integration/s11_counter.sh
# Ran once (2026-11-27, record s11_counter_loop.jsonl) on a working tree with FLASHATTN_SM90_COUNTER_BY_STREAM_WRITE
# (src/cuda/sm90/stream_write.cu; commit 5222a53 on branch session11-measured, s11_measured.patch), not merged: the stream write cost
# 2-3 us more per call than the memset on every causal row, back to back and in CUDA graphs
# (docs/kernel-notes-sm90.md, session 11).
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s11c
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/pytest.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT  # more than device_call_begin brings back
PY_DIMS="64;128;256" sm90_build_py base "" 8 330 &
PY_DIMS="64;128;256" sm90_build_py wv "-DFLASHATTN_SM90_COUNTER_BY_STREAM_WRITE=1" 8 330 &
wait
log "builds done"
rm -rf "$bld/pyroot/flashattn" && cp -r "$bld/pyroot/flashattn_wv" "$bld/pyroot/flashattn" &&
  sed -i 's/"flashattn_wv::/"flashattn::/' "$bld/pyroot/flashattn/_ops.py"
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 200 python3 bench/integration/s11_counter_loop.py base,wv 2>&1 |
  grep -v Warning | tee -a "$out/loop.jsonl"
log "loop"
PYTHONPATH=$bld/pyroot timeout 100 python3 -m pytest -q tests/python/test_compile_and_graphs.py -k graph \
  -p no:cacheprovider -rs >"$out/pytest.txt" 2>&1
log "pytest graphs (wv as flashattn) rc=$? $(tail -1 "$out/pytest.txt")"
