#!/usr/bin/env bash
# Session 68, second call: the Hopper forward's dropout after the fix of drop_probabilities (bit x + 16 leaked into
# the pair's high-half mask: every cuda_sm90 dropout case of s68_dropout.sh failed). The tree's tests and extension
# (d 64 / 96 / 128 / 192 / 256): the dropout, forward and varlen suites, Api; memcheck / racecheck / synccheck over
# three dropout cases (d64 causal, d128, d256 causal with ALiBi and a sink); the d64 / d128 dropout rows again; the
# SASS of the d64 / d128 dropout kernels and of the plain d128 kernel (instruction mix, read here); pytest's
# interface tests.
#   bash bench/integration/s68_fix.sh
# Run (the fix): suites 238 passed; pytest 68 passed; the sanitizer filter ([234] is no gtest pattern) matched
# nothing. d64 / d128 with dropout 154-340 TFLOP/s (s68_fix.jsonl). SASS (static, whole kernel): the dropout d128
# kernel 5840 instructions against the plain kernel's 4064 (IMAD +463, LOP3 +492, VIADD +276, FADD +188: the
# softmax's row sums instead of the tensor cores'). Record: s68_fix_summary.txt, s68_fix.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s68f
tests_and_py_build "64;96;128;192;256"
objs=$bld/full/src/CMakeFiles/flashattn.dir/cuda/sm90
for unit in forward_hdim128_bf16_dropout forward_hdim64_bf16_dropout forward_hdim128_bf16; do
  cuobjdump -sass "$objs/$unit.cu.o" | awk '/Function : / {keep = ($3 ~ /forward_kernel/ && $3 ~ /Li2ELi0ELi1ELb0ELb0ELi1ELb[01]EEELb0E/)} keep' \
    >"${OUT:-/tmp}/sass_$unit.txt"
done
gtest_suites 'Dropout/ForwardDropoutTest.*cuda*:Grid/ForwardTest.*cuda*:*VarlenTest*cuda*:Api.*:*ForwardWorkspace*' 150
grep -m3 -A10 ': Failure' "$out/tests.log" | cut -c1-200 >>"$out/summary.txt"
sanitizer_runs "$tests" 'Dropout/ForwardDropoutTest.*cuda_sm90_2[234]_*' 45 memcheck racecheck synccheck
(PYTHONPATH=$bld/pyroot timeout 60 python3 bench/compare.py --modes fwd --dropout 0.1 --no-decode --ceiling-n 0 \
  --hdims 64,128 --seqlens 1024,4096,16384 --rounds 2 --settle-ms 100 --out "$out" --tag dropout \
  >"$out/dropout.jsonl" 2>"$out/dropout.err")
log "compare dropout rc=$? $(grep -v Warn "$out/dropout.err" | tail -2 | cut -c1-300)"
py_tests_on_gpu test_interface.py
log total
