#!/usr/bin/env bash
# Builds the forward check and benchmark (bench/forward_check.cu, CMake target
# flashattn_forward_check) with the library it checks (no tests, CLI or examples),
# ptxas resource usage of every kernel in BUILD_DIR/build.log. The backward kernels
# are built too: -DFLASHATTN_BACKWARD=OFF does not compile at 6cdf658
# (src/cuda/sm80/backward_backend.cu then lacks kBackwardRowPad).
#   bench/build_forward_check.sh [BUILD_DIR] [extra cmake args...]
# BUILD_DIR defaults to build/forward-check; the CUDA archs to "80;90a" with every
# head dim and dtype. Extra args come last, so they override, e.g. a quick build:
#   bench/build_forward_check.sh build/fc -DFLASHATTN_HEAD_DIMS=128 -DFLASHATTN_DTYPES=bf16
# Parallel jobs: $JOBS (default: all cores). Prints the binary's path last.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build/forward-check}
shift $(( $# > 0 ? 1 : 0 ))
mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS="80;90a" \
  -DFLASHATTN_BUILD_BENCH=ON -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_CLI=OFF \
  -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_PTXAS_VERBOSE=ON "$@" >"$build/configure.log" 2>&1 \
  || { tail -30 "$build/configure.log"; exit 1; }
cmake --build "$build" --target flashattn_forward_check -j "${JOBS:-$(nproc)}" >"$build/build.log" 2>&1 \
  || { grep -B2 -A8 -m5 "error" "$build/build.log" || tail -40 "$build/build.log"; exit 1; }
echo "$build/bench/flashattn_forward_check"
