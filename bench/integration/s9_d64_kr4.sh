#!/usr/bin/env bash
# Session 9 integrator A/B (issue 6): per-consumer key ranges (sm90v) on the four-consumer d64 kernel (sm90r) for
# causal rows. With 256-row tiles and 64-key blocks consumer c of a causal tile skips 3 - c of the four diagonal
# blocks (a quarter of the consumer blocks at 512, 15% at 1k, 8% at 2k). Builds (90a, d64, forward only):
#   py base  the tree's defaults (causal d64: two consumers 128 x 128 below 8k, three 192 x 96 from 8k); as ctrl again
#   py kr4   FLASHATTN_SM90_CONSUMER_KEY_RANGE_FOUR=1 and the four-consumer kernel for masked d64 from 512 queries
#   T        tests, fp16 + bf16, kr4 with the four-consumer kernel forced on EVERY dense d64 case (masked or not)
# Then bench/sm90r_ab.py (cuDNN in the same process, 200 ms settle, two passes, order reversed) on causal
# 512..16k and non-causal 512..2k (the four-consumer kernel's unmasked rows: must not lose), the sm90 suites of T,
# racecheck + synccheck on T's small d64 cases.   bash bench/integration/s9_d64_kr4.sh
set -uo pipefail
out=/tmp/s9kr4-out
bld=/tmp/s9kr4-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld"
trap 'tar -C /tmp -czf "${OUT:-/tmp}/s9kr4-out.tgz" s9kr4-out' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
sed -i 's/^set(FLASHATTN_SM80_GENCODE -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80)/set(FLASHATTN_SM80_GENCODE)/' \
  src/cuda/CMakeLists.txt
kr4="-DFLASHATTN_SM90_CONSUMER_KEY_RANGE_FOUR=1 -DFLASHATTN_SM90_D64_ALT_BLOCK_N_MASKED=64 -DFLASHATTN_SM90_D64_ALT_MIN_SEQLEN_MASKED=512"
forced="-DFLASHATTN_SM90_CONSUMER_KEY_RANGE_FOUR=1 -DFLASHATTN_SM90_D64_ALT_BLOCK_N_MASKED=64 -DFLASHATTN_SM90_D64_ALT_MIN_SEQLEN_MASKED=0 -DFLASHATTN_SM90_D64_ALT_MIN_SEQLEN=0 -DFLASHATTN_SM90_D64_ALT_MAX_SEQLEN=0"
PY_DIMS=64 sm90_build_py base "" 5 170 &
PY_DIMS=64 sm90_build_py kr4 "$kr4" 5 170 -DFLASHATTN_PTXAS_VERBOSE=ON &
(cmake -S . -B "$bld/T" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
  -DFLASHATTN_HEAD_DIMS=64 -DFLASHATTN_DTYPES="fp16;bf16" -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF \
  -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF -DCMAKE_CUDA_FLAGS="$forced" >"$out/T_configure.log" 2>&1 &&
  timeout 170 cmake --build "$bld/T" -j 6 --target flashattn_tests >"$out/T_build.log" 2>&1; log "build T rc=$?") &
wait
grep -E "C751|Li4ELi64" -A2 "$out/py_kr4_build.log" | grep -E "C751|spill" | sort | uniq -c >"$out/ptxas_kr4.txt"
rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctrl" &&
  sed -i 's/"flashattn_base::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py"
ab() {  # ab PASS BUILDS
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 70 python3 bench/sm90r_ab.py --builds "$2" --hdims 64 \
    --causal 1 --seqlens 512,1024,2048,4096,8192,16384 --rep 40 2>&1 | grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" | tee -a "$out/ab.jsonl"
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 40 python3 bench/sm90r_ab.py --builds "$2" --hdims 64 \
    --causal 0 --seqlens 512,1024,2048 --rep 40 2>&1 | grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" | tee -a "$out/ab.jsonl"
  log "ab $1"
}
ab p1 base,kr4,ctrl
tests=$bld/T/tests/flashattn_tests
timeout 60 "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests_T.log" 2>&1
log "sm90 suites (T, four consumers + key ranges on every dense d64 case) rc=$?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests_T.log" | tr '\n' ' ')"
grep FAILED "$out/tests_T.log" | head -20 | tee -a "$out/summary.txt"
san='Grid/*cuda_sm90*_d64_*:Sm90/ConsumerKeyRange*:Grid/*cuda_sm90*_113x203_*:-*4100*:*4097x*:*2048x*:*1023x*:*1000x*:*2113x*:*8193x*:*8200x*'
for tool in racecheck synccheck; do
  timeout 45 compute-sanitizer --tool $tool --error-exitcode 3 "$tests" --gtest_filter="$san" --gtest_brief=1 >"$out/san_$tool.log" 2>&1
  log "$tool rc=$?: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/san_$tool.log" | tr '\n' ' ')"
done
ab p2 ctrl,kr4,base
log total
