#!/usr/bin/env bash
# Prepared in session 34 (not run yet): Q in registers in the paged instance of the d = dv = 128 two-consumer kernel
# too (FLASHATTN_SM90_REGISTER_Q_PAGED=1; the dense instances have it since session 34, +0.6% in stints). The paged
# instance's consumers have 232 registers; local SASS (nvcc 13.0) adds no local-memory access there. It serves
# KV-cache prefill over a block table (chunked prefill), not decoding (the one-consumer kernel).
# Builds: the C++ tests with the switch (d 128, fp16 + bf16) and the Python extension twice (base, rqp; d128 bf16),
# a control copy of base. bench/decode_ab.py on its paged prefill shapes and the paged decode row (the decode kernel
# is unchanged: a control of the method), three passes; then the sm90 suites with the switch and racecheck on the
# paged KV-cache cases.
# Prediction: rqp / base +0.3..+1% on the prefill shapes, 1.00 on the decode row.
# One H200 call (~5 minutes).
#   bash bench/integration/s35_paged_rq.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s35p
flags="-DFLASHATTN_SM90_REGISTER_Q_PAGED=1"
test_build . 128 "fp16;bf16" "$flags" 6 &
PY_DIMS=128 sm90_build_py base "" 5 300 &
PY_DIMS=128 sm90_build_py rqp "$flags" 5 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log
sm90_ctrl_copy base
shapes=prefill_b4_4k_page256,prefill_b4_4k_page256_causal,prefill_gqa_b2_8k_page64_causal,gqa_b64_8k_page256
for pass in 1 2 3; do decode_ab "p$pass" base,ctrl,rqp 100 "$shapes" >/dev/null; done
python3 - "$out/decode.jsonl" <<'PY' | tee -a "$out/summary.txt"
import json, sys
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "shape" in r:
        rows.setdefault(r["shape"], []).append(r)
for shape, rs in rows.items():
    cells = [f"{n}/base " + " ".join(f"{r['base_us'] / r[n + '_us']:.3f}" for r in rs) for n in ("ctrl", "rqp")]
    errs = max(max(r["err"].values()) for r in rs)
    print(shape, "|", " | ".join(cells), "| max err", f"{errs:.4f}")
PY
suites_and_racecheck '*cuda_sm90*:*Sm90*' '*KVCacheTest*cuda_sm90*page*' 100
suites_summary
log total
