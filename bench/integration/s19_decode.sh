#!/usr/bin/env bash
# Session 19, second call (issue 6 scope: the KV-cache forward on cuda_sm90): the one-consumer decode kernel
# (forward_config.h use_single_consumer) on the card where decoding trails cuDNN (H200: 3.97 against 4.37 TB/s),
# and its pipeline depth. s19_first.sh ran on an H100, where the decode is memory-bound at 90% of the DRAM peak
# and the new kernel read 1.000-1.004 of base on five shapes (control 0.999-1.001).
# Builds (d128, bf16): base (SINGLE_CONSUMER=0), new (the tree: one consumer, 2 stages), s3 (one consumer,
# 3 stages: 192 KB of K/V in flight per SM instead of 128), ctrl (base again).
# Prediction on an H200: new / base 1.06-1.10 on the b64 8k row (halved tensor work per byte, which the 128-row
# kernel runs at ~510 TFLOP/s there, near the power-capped rate); s3 / new 1.00-1.03. On an H100: new / base
# ~1.00 again, s3 / new 1.00-1.02.
#   bash bench/integration/s19_decode.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s19d
sm90_build_py base "-DFLASHATTN_SM90_SINGLE_CONSUMER=0" 5 400 &
sm90_build_py new "" 5 400 &
sm90_build_py s3 "-DFLASHATTN_SM90_SINGLE_CONSUMER_STAGES=3" 5 400 &
wait
sm90_ctrl_copy
for pass in "p1 base,new,s3,ctrl" "p2 ctrl,s3,new,base" "p3 s3,base,ctrl,new"; do
  set -- $pass
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 150 python3 bench/decode_ab.py --builds "$2" --rep 60 2>&1 |
    grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" | tee -a "$out/decode.jsonl"
  log "decode $1"
done
python3 - "$out/decode.jsonl" <<'PY' | tee -a "$out/summary.txt"
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1]) if '"shape"' in l]
acc = collections.defaultdict(lambda: collections.defaultdict(list))
for r in rows:
    for k in ("base", "new", "s3", "ctrl", "cudnn"):
        if isinstance(r.get(k), float):
            acc[r["shape"]][k].append(r[k])
print("shape | TB/s base new s3 ctrl cudnn (mean of passes) | new/base s3/base ctrl/base | new/cudnn s3/cudnn")
for shape, cols in acc.items():
    m = {k: sum(v) / len(v) for k, v in cols.items()}
    c = m.get("cudnn")
    print(shape, " ".join(f"{m.get(k, float('nan')):.3f}" for k in ("base", "new", "s3", "ctrl", "cudnn")), "|",
          " ".join(f"{m[k] / m['base']:.3f}" for k in ("new", "s3", "ctrl")), "|",
          " ".join(f"{m[k] / c:.3f}" if c else "-" for k in ("new", "s3")))
PY
log total
