#!/usr/bin/env bash
# Session 14 (issue 4), device call 3, ran on d5d79a7 (later commits turn the field on in the table, so "new" is no
# longer all off): TileShape::conditional_rescale (the sm80 O rescale only when a tile raises a
# row maximum past 2^8; online_softmax.h) per tuning-table row. Call 1 (s14_sm80cond.sh, the switch for every
# shape at once) measured d128 +1.3-3.9%, d256's 1 x 4 x 64 rows +0-1%, d256's 8-warp long row -2.5%; this
# call decides each table row. Builds (d 64 / 128 / 256, bf16): new = this tree (every row off, the table as
# committed), on = the same tree with conditional_rescale on in every entry (defaults stay off).
#  - bench/sm80d_peers.py, the whole standard grid (36 rows), 3 rounds: new / on / FA2 / new again.
#  - bench/sm80_general_ab.py, the kGeneral rows (softcap, ALiBi) of each head dim, on against new.
#  - the C++ GPU suites '*cuda_sm80*' and racecheck of a test build of the on table.
# Prediction: d128 +2-4% on every row, d64 +1-2%, d256 short rows +0-1%, d256 nc >= 4k (the 8-warp row) -2%.
#   bash bench/integration/s14_sm80table.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
here=$PWD
device_call_begin s14t
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/tests.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
tree_copy "$bld/on-tree"
python3 - "$bld/on-tree/src/cuda/sm80/forward_tuning.json" <<'PY'
import json, sys
table = json.load(open(sys.argv[1]))
for entry in table["entries"]:
    entry["shape"]["conditional_rescale"] = True
json.dump(table, open(sys.argv[1], "w"), indent=2)
PY
PY_DIMS="64;128;256" sm90_build_py new "" 5 300 &
(cd "$bld/on-tree" && PY_DIMS="64;128;256" sm90_build_py on "" 5 300) &
test_build "$bld/on-tree" "64;128;256" bf16 "" &
wait
log "builds done"
grep -h "spill" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
rows=""
for d in 64 128 256; do for c in 0 1; do for s in 512 1024 2048 4096 8192 16384; do rows+="$d:$c:$s,"; done; done; done
SM80D_OTHERS=on PYTHONPATH=$bld/pyroot:$here/bench PYTHONUNBUFFERED=1 timeout 260 python3 bench/sm80d_peers.py 3 \
  "${rows%,}" 2>&1 | grep -v Warning | tee -a "$out/peers.jsonl" | cut -c1-100
log "peers"
general=""
for d in 64 128 256; do general+="$d:0:2048:softcap,$d:1:8192:softcap,$d:0:8192:alibi,$d:1:2048:alibi,"; done
PYTHONPATH=$bld/pyroot:$here/bench PYTHONUNBUFFERED=1 timeout 90 python3 bench/sm80_general_ab.py on 3 \
  "${general%,}" 2>&1 | grep -v Warning | tee -a "$out/general.jsonl" | cut -c1-100
log "general"
suites_and_racecheck '*cuda_sm80*:-*GarbageIndices*' 'Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*' 90
python3 - "$out/peers.jsonl" "$out/general.jsonl" <<'PY' | tee -a "$out/summary.txt"
import json, sys
for path in sys.argv[1:]:
    for line in open(path):
        if not line.startswith("{"): continue
        r = json.loads(line)
        keys = ["hdim", "causal", "seqlen", "option", "a_over_fa2", "control_a2_over_a", "on_over_a", "on_over_fa2",
                "b_over_a", "max_diff_on_vs_fa2", "max_diff_a_vs_b"]
        print({k: r[k] for k in keys if k in r})
PY
log total
