#!/usr/bin/env bash
# Session 58 probe (not a change to the tree): what the prepare kernel costs a many-tile KV-cache decode whose
# prepare kernel only zeroes the dynamic schedule's counter. s58_probe.patch adds PROBE_SELF_RESET (the call's last
# claim resets the counter, so no prepare kernel and no memset are needed once the workspace starts at 0) and the
# trace driver of s58_trace.patch, which zeroes its workspace once. Two libraries of that tree (d64 / d128 bf16):
# the switch off (the tree's behaviour) and on; the driver's graphed step (100 replays) for each, three rounds
# alternated. The reading bounds what a self-resetting counter (an API contract: a workspace zeroed once) would
# gain; nothing here checks outputs.
#   bash bench/integration/s58_probe.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s58q
tree_copy "$bld/tree" bench/integration/s58_probe.patch || exit 1
probe_lib() {
  cmake -S "$bld/tree" -B "$bld/lib$1" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a \
    -DFLASHATTN_HEAD_DIMS="64;128" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF \
    -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
    -DCMAKE_CUDA_FLAGS="-DFLASHATTN_SM90_PROBE_SELF_RESET=$1" >"$out/lib$1.log" 2>&1 &&
    timeout 300 cmake --build "$bld/lib$1" --target flashattn -j 8 >>"$out/lib$1.log" 2>&1 &&
    nvcc -std=c++20 -O2 -I"$bld/tree/include" "$bld/tree/bench/decode_trace_driver.cu" \
      "$bld/lib$1/src/libflashattn.a" -Xcompiler -fopenmp -o "$bld/drive$1" >>"$out/lib$1.log" 2>&1
  log "lib $1 rc=$?"
}
probe_lib 0 &
probe_lib 1
wait
for round in 1 2 3; do
  for run in 1024:48:64 1024:64:64 4096:48:64 1024:17:128 1024:40:128 1024:64:128 4096:64:128; do
    IFS=: read -r keys batch d <<<"$run"
    for v in 0 1; do
      echo "round $round probe $v $(timeout 30 "$bld/drive$v" "$keys" "$batch" kvcache /dev/null "$d" 0 32 8 | head -1)"
    done
  done
done | tee -a "$out/summary.txt"
log total
