#!/usr/bin/env bash
# Session 69, third call: the padded head dims' speed. bench/compare.py (16k tokens, hidden 2048, bf16) beside
# cuda_sm80, SDPA's FA2 and cuDNN: the backward at d = 40 / 80 / 96 / 112 / 160 / 224 (cuda_sm90 on the kernel
# that holds them; before this session cuda_sm80 ran them), the forward at d = 96 (now d = 128's whole kernel
# set where the d = 128 units are built: multicast, split tail) and the forward at d = 56 / 200 / 256-key rows.
#   bash bench/integration/s69_bench.sh
# Run: build 54 s; the backward 0.88-1.21x cuDNN, 1.20-1.87x SDPA FA2; the d = 96 forward 1.05-1.15x cuDNN.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s69b
PY_DIMS="32;64;96;128;160;192;224;256" sm90_build_py new "" 16 300 -DFLASHATTN_BACKWARD=ON
(PYTHONPATH=$bld/pyroot timeout 300 python3 bench/compare.py --modes bwd --hdims 40,80,96,112,160,224 \
  --seqlens 512,4096 --no-decode --ceiling-n 0 --rounds 2 --settle-ms 100 --out "$out" --tag bwd \
  >"$out/bwd.jsonl" 2>"$out/bwd.err")
log "compare bwd rc=$? $(grep -v Warn "$out/bwd.err" | tail -2 | cut -c1-300)"
(PYTHONPATH=$bld/pyroot timeout 120 python3 bench/compare.py --modes fwd --hdims 96 \
  --seqlens 512,2048,8192 --no-decode --ceiling-n 0 --rounds 2 --settle-ms 100 --out "$out" --tag fwd96 \
  >"$out/fwd96.jsonl" 2>"$out/fwd96.err")
log "compare fwd96 rc=$? $(grep -v Warn "$out/fwd96.err" | tail -2 | cut -c1-300)"
log total
