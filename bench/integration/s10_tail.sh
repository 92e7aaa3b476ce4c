#!/usr/bin/env bash
# Session 10 integrator A/B (issues 6 and 4), one device call:
#  sm90: the dynamic schedule's last L2 section grown to FLASHATTN_SM90_TAIL_SECTION_FACTOR tiles per CTA
#        (src/cuda/sm90/tile_sections.h). Python extensions (90a, bf16, d 64/128/256, forward only):
#          base  TAIL_SECTION_FACTOR=0 (the order before session 10), installed twice: base and ctrl
#          f2    TAIL_SECTION_FACTOR=2 (the new default)
#          f3    TAIL_SECTION_FACTOR=3
#        bench/sm90r_ab.py (cuDNN beside, 200 ms settle, two orders per row) on every causal row of the
#        standard grid, twice (second pass: builds reversed), plus non-causal 512 / 8k (static schedule:
#        the order is unchanged there, only the decode's code).
#  sm80: the table with the d256 causal <= 1024 row extended to 2048 (bench/integration/s10_table_d256c2k.py),
#        extension b (d256 only) beside base and FA2: bench/sm80d_peers.py, 4 rounds, d256 causal 1k/2k/4k and
#        non-causal 512.
#   bash bench/integration/s10_tail.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s10tail
trap 'cp "$out/summary.txt" "$out"/*.jsonl "${OUT:-/tmp}/" 2>/dev/null; tar -C /tmp -czf "${OUT:-/tmp}/s10tail-out.tgz" s10tail-out' EXIT  # more than device_call_begin brings back
here=$PWD
# The sm80 variant: a copy of the tree with the variant table.
rm -rf /tmp/s10-b && mkdir -p /tmp/s10-b && tar -C "$here" --exclude='./build*' --exclude=./.git -cf - . | tar -C /tmp/s10-b -xf -
python3 bench/integration/s10_table_d256c2k.py src/cuda/sm80/forward_tuning.json /tmp/s10-b/src/cuda/sm80/forward_tuning.json
PY_DIMS="64;128;256" sm90_build_py base "-DFLASHATTN_SM90_TAIL_SECTION_FACTOR=0" 5 330 &
PY_DIMS="64;128;256" sm90_build_py f2 "-DFLASHATTN_SM90_TAIL_SECTION_FACTOR=2" 5 330 &
PY_DIMS="64;128;256" sm90_build_py f3 "-DFLASHATTN_SM90_TAIL_SECTION_FACTOR=3" 5 330 &
(cd /tmp/s10-b && PY_DIMS=256 bld=$bld out=$out sm90_build_py b "" 3 330) &
wait
log "builds done"
for n in ctrl new; do
  pkg=flashattn_$n; [[ $n == new ]] && pkg=flashattn
  rm -rf "$bld/pyroot/$pkg" && cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/$pkg" &&
    sed -i "s/\"flashattn_base::/\"$pkg::/" "$bld/pyroot/$pkg/_ops.py"
done
ab() { sm90_ab "$1" "$2" 64,128,256 "$3" "$4" 40 150; }  # ab PASS BUILDS CAUSAL SEQLENS
ab p1 base,f2,f3,ctrl 1 512,1024,2048,4096,8192,16384
SM80D_OTHERS=b PYTHONPATH=$bld/pyroot:$here/bench PYTHONUNBUFFERED=1 timeout 90 python3 bench/sm80d_peers.py 4 \
  256:1:1024,256:1:2048,256:1:4096,256:0:512 2>&1 | grep -v Warning | tee -a "$out/sm80.jsonl"
log "sm80 peers"
ab p2 ctrl,f3,f2,base 1 512,1024,2048,4096,8192,16384
ab p3 base,f2,ctrl 0 512,8192
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base f2 f3 ctrl | tee -a "$out/summary.txt"
log total
