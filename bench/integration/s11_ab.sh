#!/usr/bin/env bash
# Session 11 integrator A/B (issue 6, the short causal rows), one device call. Python extensions (90a, bf16,
# d 64/128/256, forward only):
#   base  the tree's defaults (installed twice: base and ctrl, the noise floor)
#   wv    FLASHATTN_SM90_COUNTER_BY_STREAM_WRITE=1: the dynamic schedule's counter zeroed by a stream write
#         instead of a memset launch (src/cuda/sm90/stream_write.h)
#   hd    FLASHATTN_SM90_HALF_TOP_BLOCK=1: the first consumer's top-block P V GEMM over half its keys
#   new   both (installed as flashattn): the GPU pytest runs on it (CUDA graph capture of causal calls
#         goes through the stream write; the half block's outputs against the float64 reference)
# bench/sm90r_ab.py (cuDNN beside, 200 ms settle, two orders per row): causal d 64/128/256 at 512 / 1k / 2k,
# twice (the second pass with the builds reversed), then causal 8k and non-causal 512 once.
#   bash bench/integration/s11_ab.sh
# Ran once (2026-11-27, records s11_ab.jsonl, s11_ab_summary.txt) on a working tree that had the code of both
# switches; neither was merged (hd lost 7-14% at d128 causal 512, its target row; wv, see s11_counter.sh;
# docs/kernel-notes-sm90.md, session 11). That tree is commit 5222a53 on branch session11-measured, also s11_measured.patch on 74653e7 (rebuilt from
# the session's edits, the off build of d128 compiling as it did then); on main the wv / hd builds are the base's code.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s11ab
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/pytest.txt "${OUT:-/tmp}/" 2>/dev/null; tar -C /tmp -czf "${OUT:-/tmp}/s11ab-out.tgz" s11ab-out' EXIT  # more than device_call_begin brings back
PY_DIMS="64;128;256" sm90_build_py base "" 4 330 &
PY_DIMS="64;128;256" sm90_build_py wv "-DFLASHATTN_SM90_COUNTER_BY_STREAM_WRITE=1" 4 330 &
PY_DIMS="64;128;256" sm90_build_py hd "-DFLASHATTN_SM90_HALF_TOP_BLOCK=1" 4 330 &
PY_DIMS="64;128;256" sm90_build_py new "-DFLASHATTN_SM90_COUNTER_BY_STREAM_WRITE=1 -DFLASHATTN_SM90_HALF_TOP_BLOCK=1" 4 330 &
wait
log "builds done"
grep -h "C75[0-9][0-9]" "$out"/py_*_build.log | grep -o "(C75..)" | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
ab() { sm90_ab "$1" "$2" 64,128,256 "$3" "$4" 40 150; }  # ab PASS BUILDS CAUSAL SEQLENS
ab p1 base,wv,hd,new,ctrl 1 512,1024,2048
ab p2 ctrl,new,hd,wv,base 1 512,1024,2048
ab p3 base,wv,hd,new,ctrl 1 8192
ab p4 base,hd,ctrl 0 512
PYTHONPATH=$bld/pyroot timeout 150 python3 -m pytest -q -x tests/python -p no:cacheprovider >"$out/pytest.txt" 2>&1
log "pytest (new) rc=$? $(tail -1 "$out/pytest.txt")"
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base wv hd new ctrl | tee -a "$out/summary.txt"
log total
