#!/usr/bin/env bash
# Session 66, second call on the d = 192 / (192, 128) Hopper backward (s66_d192.sh's first results: suites and
# racecheck / memcheck passed; synccheck reported divergent threads at the consumers' shared barriers, reached
# from the two consumer instances' code; d256 ran 1.017-1.046x the time of the tree before, its consumers now
# two instances too). Now: one instance where the split is symmetric (d = 256), per-consumer instances with
# unaligned barriers (barrier.sync / barrier.arrive) at d = 192 / (192, 128).
# 1. Every CUDA backward suite; synccheck / racecheck over the d192 and d256 grid cases, memcheck over d192's.
# 2. d = 256 against the tree before the session's change (s66_d192b.patch reversed): predicted level 0.99-1.01.
# 3. d192 and 192x128 beside cuda_sm80 and cuDNN (whose gradients are now checked too: its 192x128 causal read
#    1.3x its non-causal TFLOP/s), against SPLIT_STAGES3 (three Q / dO stages at d = 192) as the base package
#    (flashattn_s3): predicted 0.98-1.02x.
#   bash bench/integration/s66_d192b.sh
# Run (session 66, fb3f787): suites 174 passed (48 skipped); synccheck, racecheck clean over 19 d192 / d256
# grid cases, memcheck over 10 d192 ones. d256 against the tree before: 0.995-1.013x the time, causal 4k
# 1.032. SPLIT_STAGES3 (base) against two stages: the tree 0.967-1.024x its time: not kept (the switch
# removed). cuDNN's gradients check (maxrel 0.0038-0.0054, ours 0.0046-0.0059). d192 1.08-1.26x cuDNN,
# 1.5-1.9x cuda_sm80; 192x128 non-causal 1.16-1.21x cuDNN, causal 0.78-0.86x; 1.6-2.0x cuda_sm80.
# Record: s66_d192b_summary.txt, s66_d192b.jsonl (the d192 rows), s66_d192b_d256.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s66e
split_column_call bench/integration/s66_d192b.patch s3 "-DFLASHATTN_SM90_BWD_SPLIT_STAGES3=1" || exit 1
(PYTHONPATH=$bld/pyroot timeout 220 python3 bench/backward_compare.py --base-package flashattn_s3 \
  --hdims 192,192x128 --seqlens 512,1024,2048,4096,8192,16384 --rounds 2 --settle-ms 100 --check-max-seqlen 2048 \
  --backends cuda_sm90,cuda_sm80 --base-backends cuda_sm90 --out "$out/d192.json" >"$out/d192.jsonl" \
  2>"$out/d192.err")
log "d192 rc=$? $(grep -v Warning "$out/d192.err" | tail -2 | cut -c1-300)"
python3 bench/backward_ab_table.py "$out/d192.jsonl" >>"$out/summary.txt"
log total
