#!/usr/bin/env bash
# Run 1 of helper sm90v (session 9, issue 6): per-consumer key ranges (consumer.h kConsumerKeyRange) and
# 64-key blocks for masked short rows at d64 / d128 (forward_config.h use_masked_block64), in one device call.
#   cd .device-carry/sm90v && DEADLINE=245 timeout 262 bash bench/sm90v_run1.sh
# Builds from THIS tree (90a, forward only, bf16 Python extensions of d 64/128/256; sm80 gencodes dropped
# from the carried copy), all in parallel, all finished before anything is timed:
#   py base  FLASHATTN_SM90_CONSUMER_KEY_RANGE=0 (main's kernels); installed a second time as ctrl
#   py kr    the defaults: per-consumer key ranges on (d256 causal: 64-key <= 512 keys, 80-key beyond)
#   py kr64  kr + 64-key blocks for masked rows up to 4096 keys at d64, d128 and d256
#   N        tests, fp16 + bf16, kr + 64-key d64 / d128 masked kernels up to 4096 keys (every masked d64 /
#            d128 case of the suites runs them); d256 as kr
# Then: a smoke run of tests/consumer_key_range_test.cpp on N, bench/sm90v_ab.py (base, kr, kr64, ctrl,
# cuDNN in one process; causal 512..4k and non-causal 512 / 2k at d 64 / 128 / 256), the sm90 suites of N.
set -uo pipefail
out=/tmp/sm90v-out
bld=/tmp/sm90v-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90v-out.tgz" sm90v-out; }
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
KR_FLAGS=""
B64="-DFLASHATTN_SM90_MASKED_BLOCK64_MAX_SEQLEN_D64=4096 -DFLASHATTN_SM90_MASKED_BLOCK64_MAX_SEQLEN_D128=4096"
KR64_FLAGS="$B64 -DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=4096"
build_py() { PY_DIMS="64;128;256" sm90_build_py "$1" "$2" 6 "$(cap 160)" -DFLASHATTN_PTXAS_VERBOSE=ON; }
# shellcheck disable=SC2086  # $4 may name several targets
cpp_build() {  # cpp_build NAME DTYPES TARGETS FLAGS
  cmake -S . -B "$bld/$1" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS="64;128;256" -DFLASHATTN_DTYPES="$2" -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF \
    -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_PTXAS_VERBOSE=ON \
    -DCMAKE_CUDA_FLAGS="$4" >"$out/$1_configure.log" 2>&1 &&
    timeout "$(cap 170)" cmake --build "$bld/$1" -j 8 --target $3 >"$out/$1_build.log" 2>&1
  echo "rc=$?" >>"$out/$1_build.log"
  log "build $1 $(tail -1 "$out/$1_build.log")"
}
pids=()
build_py base "$BASE_FLAGS" & pids+=($!)
build_py kr "$KR_FLAGS" & pids+=($!)
build_py kr64 "$KR64_FLAGS" & pids+=($!)
cpp_build N "fp16;bf16" flashattn_tests "$B64" & pids+=($!)
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
if [[ -x $tests ]]; then
  start=$(date +%s)
  timeout "$(cap 40)" "$tests" --gtest_filter='*ConsumerKeyRange*' --gtest_brief=1 >"$out/smoke.log" 2>&1
  log "smoke (consumer_key_range_test, N) rc=$? in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/smoke.log" | tr '\n' ' ')"
  grep -E 'FAILED|Failure' "$out/smoke.log" | head -10 | tee -a "$out/summary.txt"
fi

ab() {  # ab BUILDS CAUSAL SEQLENS TIMEOUT TAG
  local start
  start=$(date +%s)
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "$(cap "$4")" python3 bench/sm90v_ab.py --builds "$1" \
    --hdims 64,128,256 --causal "$2" --seqlens "$3" --rep "${AB_REP:-40}" --settle-ms 200 --tag "$5" 2>&1 |
    grep -v Warning | tee -a "$out/ab.jsonl"
  log "ab $5 $1 causal $2 x $3 rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"
}
if [[ -n $builds ]]; then
  ab "$builds" 1 512,1024,2048,4096 70 c1
  ab "$(echo "$builds" | tr ',' '\n' | tac | paste -sd,)" 0 512,2048 30 n1
fi

if [[ -x $tests ]] && (($(left) > 12)); then
  start=$(date +%s)
  timeout "$(cap 60)" "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests.log" 2>&1
  log "sm90 suites (N) rc=$? in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests.log" | head -20 | tee -a "$out/summary.txt"
fi
# A second causal pass, order reversed, while time is left.
if [[ -n $builds ]] && (($(left) > 40)); then
  ab "$(echo "$builds" | tr ',' '\n' | tac | paste -sd,)" 1 512,1024,2048,4096 "$(($(left) - 5))" c2
fi
log "total"
