#!/usr/bin/env bash
# Run 2 of helper sm90v (session 9, issue 6): per-consumer key ranges with the empty issue turns where the
# skipped blocks' GEMMs would have been (consumer.h skip_top_keys; run 1 owed them to the tile's end, which
# made the other consumer's last P V wait for this one's epilogue), on the d = dv = 256 kernels (the
# default FLASHATTN_SM90_CONSUMER_KEY_RANGE=1), in one device call.
#   cd .device-carry/sm90v && DEADLINE=245 timeout 262 bash bench/sm90v_run2.sh
# Builds from THIS tree (90a, forward only; sm80 gencodes dropped from the carried copy), in parallel:
#   py base  FLASHATTN_SM90_CONSUMER_KEY_RANGE=0 (main's kernels), bf16 d256; installed again as ctrl
#   py kr    the defaults (64-key blocks <= 512 keys, 80-key beyond)
#   py kr64  kr + 64-key blocks for causal / windowed rows up to 4096 keys
#   N        tests, fp16 + bf16, d 64 / 128 / 256, the defaults (d64 / d128 kernels = main's SASS)
#   N64      tests, fp16 + bf16, d 256, as kr64
# Then: bench/sm90v_ab.py (base, kr, kr64, ctrl, cuDNN in one process; d256 causal 512..4k, two passes in
# reversed order; non-causal 512 / 2k), the sm90 suites of N and N64, racecheck + synccheck on N.
set -uo pipefail
out=/tmp/sm90v2-out
bld=/tmp/sm90v2-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90v2-out.tgz" sm90v2-out; }
trap finish EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
left() { echo $((${DEADLINE:-245} - ($(date +%s) - t0))); }
cap() { local l; l=$(left); echo $(($1 < l ? $1 : (l > 1 ? l : 1))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >"$out/gpu.txt" 2>&1
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
sed -i 's/^set(FLASHATTN_SM80_GENCODE -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80)/set(FLASHATTN_SM80_GENCODE)/' \
  src/cuda/CMakeLists.txt
log "sm80 gencode dropped: $(grep -c 'set(FLASHATTN_SM80_GENCODE)' src/cuda/CMakeLists.txt)"

BASE_FLAGS="-DFLASHATTN_SM90_CONSUMER_KEY_RANGE=0"
KR64_FLAGS="-DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=4096"
build_py() { PY_DIMS=256 sm90_build_py "$1" "$2" 4 "$(cap 150)" -DFLASHATTN_PTXAS_VERBOSE=ON; }
# shellcheck disable=SC2086
cpp_build() {  # cpp_build NAME DIMS FLAGS
  cmake -S . -B "$bld/$1" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS="$2" -DFLASHATTN_DTYPES="fp16;bf16" -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF \
    -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_PTXAS_VERBOSE=ON \
    -DCMAKE_CUDA_FLAGS="$3" >"$out/$1_configure.log" 2>&1 &&
    timeout "$(cap 170)" cmake --build "$bld/$1" -j 6 --target flashattn_tests >"$out/$1_build.log" 2>&1
  echo "rc=$?" >>"$out/$1_build.log"
  log "build $1 $(tail -1 "$out/$1_build.log")"
}
pids=()
build_py base "$BASE_FLAGS" & pids+=($!)
build_py kr "" & pids+=($!)
build_py kr64 "$KR64_FLAGS" & pids+=($!)
cpp_build N "64;128;256" "" & pids+=($!)
cpp_build N64 "256" "$KR64_FLAGS" & pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done
builds=""
for b in base kr kr64; do [[ -d $bld/pyroot/flashattn_$b ]] && builds+="${builds:+,}$b"; done
if [[ -d $bld/pyroot/flashattn_base ]]; then
  rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctrl" &&
    sed -i 's/"flashattn_base::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py" && builds+=,ctrl
fi
log "builds done: $builds; wgmma serialisation lines: $(grep -c -E 'C751[458]' "$out"/*_build.log | tr '\n' ' ')"
for f in "$out"/*_build.log; do
  grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$f" | grep -E "entry|spill" |
    sed -E 's/.*ForwardConfigILi([0-9]+)ELi([0-9]+)E(13__nv_bfloat16|6__half)Li([0-9])ELi([0-9]+)ELi([0-9]+)EEELb([01]).*/kernel d\1 dv\2 \3 c\4 blockN\5 cluster\6 paged\7/' |
    sed "s|^|$(basename "$f" _build.log): |"
done >"$out/ptxas.txt" 2>&1
sm90_sass_counts "$bld/N" >"$out/sass_counts.txt" 2>&1

tests=$bld/N/tests/flashattn_tests
tests64=$bld/N64/tests/flashattn_tests
if [[ -x $tests ]]; then
  start=$(date +%s)
  timeout "$(cap 30)" "$tests" --gtest_filter='*ConsumerKeyRange*' --gtest_brief=1 >"$out/smoke.log" 2>&1
  log "smoke (consumer_key_range_test, N) rc=$? in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/smoke.log" | tr '\n' ' ')"
  grep -E 'FAILED|Failure' "$out/smoke.log" | head -10 | tee -a "$out/summary.txt"
fi

ab() {  # ab BUILDS CAUSAL SEQLENS TIMEOUT TAG
  local start
  start=$(date +%s)
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "$(cap "$4")" python3 bench/sm90v_ab.py --builds "$1" \
    --hdims 256 --causal "$2" --seqlens "$3" --rep "${AB_REP:-40}" --settle-ms 200 --tag "$5" 2>&1 |
    grep -v Warning | tee -a "$out/ab.jsonl"
  log "ab $5 $1 causal $2 x $3 rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"
}
rev() { echo "$1" | tr ',' '\n' | tac | paste -sd,; }
if [[ -n $builds ]]; then
  ab "$builds" 1 512,1024,2048,4096 40 c1
  ab "$(rev "$builds")" 1 512,1024,2048,4096 40 c2
  ab "$builds" 0 512,2048 25 n1
fi

suite() {  # suite NAME BINARY FILTER TIMEOUT
  local start
  [[ -x $2 ]] && (($(left) > 8)) || return 0
  start=$(date +%s)
  timeout "$(cap "$4")" "$2" --gtest_filter="$3" --gtest_brief=1 >"$out/tests_$1.log" 2>&1
  log "suite $1 rc=$? in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests_$1.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests_$1.log" | head -20 | tee -a "$out/summary.txt"
}
suite N "$tests" '*cuda_sm90*' 40
suite N64 "$tests64" '*cuda_sm90*' 25
# Sanitizers: small causal / windowed d256 cases of both kernels (64-key <= 512 keys, 80-key beyond), packed
# GQA, sq != sk both ways, sliding windows (skips at both ends).
san='*ConsumerKeyRange*cuda_sm90_1_*:*ConsumerKeyRange*cuda_sm90_2_*:*ConsumerKeyRange*cuda_sm90_3_*:*ConsumerKeyRange*cuda_sm90_4_*:*ConsumerKeyRange*cuda_sm90_9_*:*ConsumerKeyRange*cuda_sm90_11_*'
for tool in racecheck synccheck; do
  [[ -x $tests ]] && (($(left) > 8)) || break
  start=$(date +%s)
  timeout "$(cap 40)" compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$san" --gtest_brief=1 \
    >"$out/sanitize_$tool.log" 2>&1
  log "$tool rc=$? in $(($(date +%s) - start)) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/sanitize_$tool.log" | tr '\n' ' ')"
done
log "total"
