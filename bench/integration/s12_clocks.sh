#!/usr/bin/env bash
# Session 12 (issue 6): SM clock and power beside TFLOP/s for the d128 kernel, its DIAGNOSTIC skeletons
# (s12_skeleton.patch: noexp, nosoft; wrong results by design) and cuDNN (bench/integration/s12_clocks.py).
#   bash bench/integration/s12_clocks.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s12ck
tree_copy /tmp/s12ck-diag bench/integration/s12_skeleton.patch
PY_DIMS=128 sm90_build_py base "" 5 300 &
(cd /tmp/s12ck-diag && PY_DIMS=128 sm90_build_py noexp "-DFLASHATTN_SM90_DIAG_SOFTMAX=1" 5 300) &
(cd /tmp/s12ck-diag && PY_DIMS=128 sm90_build_py nosoft "-DFLASHATTN_SM90_DIAG_SOFTMAX=2" 5 300) &
wait
log "builds done"
for row in "0 16384" "0 4096" "1 16384"; do
  set -- $row
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 120 python3 bench/integration/s12_clocks.py \
    --builds base,noexp,nosoft,cudnn --hdim 128 --causal "$1" --seqlen "$2" --rounds 2 2>&1 | grep -v Warning |
    tee -a "$out/clocks.jsonl"
  log "clocks $row"
done
python3 - "$out/clocks.jsonl" <<'PY' | tee -a "$out/summary.txt"
import collections, json, sys
m = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith("{"):
        r = json.loads(line); m[(r["causal"], r["seqlen"], r["build"])].append(r)
for key, rs in sorted(m.items()):
    f = lambda k: sum(r[k] for r in rs) / len(rs)
    print(key, "TFLOP/s %.1f  MHz %.0f  W %.0f  TFLOP/s per GHz %.1f" % (f("tflops"), f("mhz"), f("watts"), f("tflops_per_ghz")),
          sorted({x for r in rs for x in r["reasons"]}))
PY
log total
