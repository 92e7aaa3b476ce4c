#!/usr/bin/env bash
# Session 70: which shapes leave cuda_sm80's forward LSE unwritten (s70_lse_probe.cpp over a sweep of batch
# counts, lengths and heads; cuda_sm90 beside it). A build of head dim 128, bf16.
#   bash bench/integration/s70_lse_probe.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s70p
cmake -S . -B "$bld/lib" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_HEAD_DIMS=128 \
  -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_CLI=OFF \
  -DFLASHATTN_BUILD_EXAMPLES=OFF >"$out/configure.log" 2>&1 &&
  timeout 300 cmake --build "$bld/lib" -j 16 --target flashattn >"$out/build.log" 2>&1
log "build rc=$?"
g++ -std=c++20 -O2 -Iinclude -I/usr/local/cuda/include bench/integration/s70_lse_probe.cpp "$bld/lib/src/libflashattn.a" \
  -L/usr/local/cuda/lib64 -lcudart -fopenmp -ldl -lpthread -o "$bld/probe" >"$out/probe_build.log" 2>&1
log "probe build rc=$? $(head -c 600 "$out/probe_build.log")"
for shape in "65636 32 2 128" "65535 32 2 128" "65536 32 2 128" "32768 32 2 128" "1000 32 2 128" \
  "65636 128 2 128" "65636 64 2 128" "65636 65 2 128" "16448 32 8 128" "131072 32 1 128" "40000 32 2 128" \
  "20000 32 4 128"; do
  # shellcheck disable=SC2086  # the shape's four numbers
  timeout 60 "$bld/probe" sm80 $shape >>"$out/summary.txt" 2>&1
done
# shellcheck disable=SC2086
timeout 60 "$bld/probe" sm90 65636 32 2 128 >>"$out/summary.txt" 2>&1
log total
