#!/usr/bin/env bash
# Session 59: the drawn backward cases (Random/BackwardRandomTest) on both CUDA backends under three seeds,
# then ncu's time of each kernel of one backward call (cuda_sm80's preprocess and postprocess around
# cuda_sm90's main kernel) at d64 / d128, 512 / 2048 tokens, causal and not.
#   bash bench/integration/s59_random.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s59r
tests_and_py_build "64;128"
for seed in 101 202 303; do
  FLASHATTN_TEST_SEED=$seed gtest_suites 'Random/BackwardRandomTest.*cuda*' 150
  grep -E "drawn_case|Failure|FAILED" "$out/tests.log" | head -5 >>"$out/summary.txt"
done
(cd /tmp && PYTHONPATH=$bld/pyroot timeout 200 ncu --nvtx --nvtx-include "regex:bwd_.*/" \
  --metrics gpu__time_duration.sum --csv python3 "$OLDPWD/bench/backward_kernel_times.py" >"$out/times.csv" 2>"$out/ncu.err")
log "ncu rc=$? $(tail -1 "$out/ncu.err" | cut -c1-200)"
python3 - "$out/times.csv" >>"$out/summary.txt" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]
kname, val, unit = head.index("Kernel Name"), head.index("Metric Value"), head.index("Metric Unit")
ranges = [i for i, h in enumerate(head) if h.startswith("NVTX")]
total = collections.OrderedDict()
for r in rows[1:]:
    tag = next((r[i] for i in ranges if "bwd_" in r[i]), "?")
    total.setdefault(tag, []).append((r[kname][:60], r[val], r[unit]))
for tag, ks in total.items():
    print(tag, "  ".join(f"{n}: {v} {u}" for n, v, u in ks))
PY
log total
