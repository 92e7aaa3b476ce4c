#!/usr/bin/env bash
# Session 68, fourth call: the forward's key schedule for every other dropout kernel (s68_keys.patch): cuda_sm80's
# forward (apply_dropout) and backward and cuda_sm90's backward (dropout_bits_transposed, dropout_bits_rows) take
# dropout_keys(seed, offset) as a kernel parameter, each Philox round's keys constant operands instead of the 20
# adds a call. Predicted: with dropout 0.1, 0.90-0.96x the time of the tree before at d64 / d128, less at d256.
# 1. The tree's tests and extension (d 64 / 128 / 256, backward built) and, in parallel, the extension before the
#    patch (flashattn_base, bf16, backward built): the backward's and the forward's dropout suites (both CUDA
#    backends), determinism with dropout, Api.
# 2. bench/backward_compare.py --dropout 0.1, cuda_sm90 and cuda_sm80 against the base package's.
# 3. bench/sm90r_ab.py --dropout 0.1 --backend cuda_sm80 (cuda_sm80's forward, base against new, in stints).
#   bash bench/integration/s68_keys.sh
# Run (the patch applied): suites 70 passed (68 skipped); outputs bitwise the base's (err 0 with the same seed).
# With dropout 0.1: cuda_sm90's backward 0.948-0.985x the time of base (d64 0.948-0.954, d128 0.948-0.963, d256
# 0.964-0.985), cuda_sm80's backward 0.956-0.998x, cuda_sm80's forward 0.907-0.987x (stints). Record:
# s68_keys_summary.txt, s68_keys_drop.jsonl, s68_keys_sm80_forward.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s68k
tests_and_base_around_patch bench/integration/s68_keys.patch "64;128;256" -DFLASHATTN_BACKWARD=ON || exit 1
gtest_suites 'Grid/BackwardTest.*cuda*dropout*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.BackwardDropout*:Dropout/ForwardDropoutTest.*cuda*:Grid/ForwardTest.*cuda*dropout*:*VarlenTest*cuda*dropout*:Api.*' 150
grep -m3 -A10 ': Failure' "$out/tests.log" | cut -c1-200 >>"$out/summary.txt"
backward_compare_vs_base drop 150 --hdims 64,128,256 --seqlens 1024,16384 --dropout 0.1 --rounds 2 \
  --settle-ms 100 --backends cuda_sm90,cuda_sm80 --base-backends cuda_sm90,cuda_sm80
(PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 80 python3 bench/sm90r_ab.py --builds base,new --dropout 0.1 \
  --backend cuda_sm80 --hdims 64,128,256 --causal 0,1 --seqlens 1024,16384 --sustained 3 2>&1 |
  grep -v Warning >"$out/sm80_forward.jsonl")
log "sm80 forward A/B rc=$?"
log total
