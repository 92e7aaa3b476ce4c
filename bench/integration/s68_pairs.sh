#!/usr/bin/env bash
# Session 68, third call: the Hopper forward's drop bits in fewer instructions (s68_pairs.patch): the Philox key
# schedule passed as parameters (read as constant operands instead of 20 adds a call), each Philox word's two
# draws compared in three instructions (a borrow-free subtraction per 16-bit half and a majority), the bits laid
# out so that a packed pair's two sit 16 apart (one shift and a byte permute make the pair's mask; was a multiply
# and four more). s68_fix.sh's SASS: the dropout d128 kernel carried ~880 more instructions a key block and
# thread than the plain one (IMAD +230, LOP3 +250, VIADD +140); with dropout 0.1 the forward read 0.50x its plain
# speed at d128 (347 against 694 TFLOP/s at 16k), 0.35x at d64.
# 1. The tree's tests and extension (d 64 / 96 / 128 / 192 / 256) and, in parallel, the extension before the patch
#    (flashattn_base, d 64 / 128 / 256, bf16); the new d128 dropout kernel's SASS.
# 2. The dropout, forward, varlen, reference-dropout and Api suites.
# 3. bench/sm90r_ab.py --dropout 0.1 --sustained 3: base, new and cuDNN in stints. Predicted: new 0.78-0.88x the
#    time of base at d64 / d128, 0.85-0.95x at d256.
# 4. memcheck / racecheck / synccheck over three cuda_sm90 dropout cases.
#   bash bench/integration/s68_pairs.sh
# Run (the patch applied): suites 239 passed; memcheck / racecheck / synccheck clean over three dropout cases; the
# base package did not load (undefined symbol of its forward-only build), so the stints ran new beside cuDNN only:
# d64 180-239, d128 300-397, d256 338-498 TFLOP/s (s68_pairs.jsonl), against s68_fix.jsonl's 0.83-0.87x the time
# with cuDNN within 0.8% between the calls. The d128 kernel's SASS: 5296 instructions (5840 before; VIADD 371 ->
# 113). Record: s68_pairs_summary.txt, s68_pairs.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s68p
tree_copy "$bld/base-tree" bench/integration/s68_pairs.patch -R
(cd "$bld/base-tree" && PY_DIMS="64;128;256" sm90_build_py base "" 6 400) &
tests_and_py_build "64;96;128;192;256"
wait
objs=$bld/full/src/CMakeFiles/flashattn.dir/cuda/sm90
cuobjdump -sass "$objs/forward_hdim128_bf16_dropout.cu.o" | awk '/Function : / {keep = ($3 ~ /forward_kernel/)} keep' \
  >"${OUT:-/tmp}/sass_forward_hdim128_bf16_dropout_pairs.txt"
gtest_suites 'Dropout/ForwardDropoutTest.*cuda*:Grid/ForwardTest.*cuda*:*VarlenTest*cuda*:Api.*:ReferenceForward.Dropout*' 150
grep -m3 -A10 ': Failure' "$out/tests.log" | cut -c1-200 >>"$out/summary.txt"
(PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 120 python3 bench/sm90r_ab.py --builds base,new --dropout 0.1 \
  --hdims 64,128,256 --causal 0,1 --seqlens 1024,4096,16384 --sustained 3 2>&1 | grep -v Warning >"$out/ab.jsonl")
log "A/B rc=$?"
sanitizer_runs "$tests" '*ForwardDropoutTest*cuda_sm90_22_*:*ForwardDropoutTest*cuda_sm90_23_*:*ForwardDropoutTest*cuda_sm90_24_*' \
  60 memcheck racecheck synccheck
log total
