#!/usr/bin/env bash
# One device call for cuda_sm90: the forward check (bench/forward_check.cu, every case,
# each launched twice), racecheck/synccheck on its small case, the benchmark and the SDPA
# peers, results under $OUT.
#   bench/sm90_gpu_run.sh [BINARY] [bench dims] [peer dims]
# BINARY: a built flashattn_forward_check; left out (or "build"), one is built first with
# bench/build_forward_check.sh into build/forward-check, with $SM90_CMAKE_ARGS (default: the
# head dims sm90 has kernels for, which keeps the build short; sm90 refuses the others anyway).
# On the device tool, build outputs stay between calls: one call can build
# (bench/build_forward_check.sh build/forward-check ...), the next run build/forward-check/bench/flashattn_forward_check.
set -uo pipefail
bin=${1:-build}
[[ $bin == build ]] || bin=$(realpath "$bin")
dims=${2:-128}
peer_dims=${3:-$dims}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${OUT:-/tmp/sm90-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee "$out/gpu.txt"
if [[ $bin == build ]]; then
  echo "== build"
  read -ra cmake_args <<<"${SM90_CMAKE_ARGS:--DFLASHATTN_HEAD_DIMS=64;128;192;256}"
  start=$(date +%s)
  bin=$(timeout 480 bench/build_forward_check.sh build/forward-check "${cmake_args[@]}" 2>&1 | tail -1)
  echo "build in $(( $(date +%s) - start )) s: $bin"
  cp build/forward-check/build.log "$out/build.log" 2>/dev/null
  [[ -x $bin ]] || { tail -40 "$out/build.log" 2>/dev/null; exit 1; }
fi
echo "== check"
timeout 180 "$bin" --backend cuda_sm90 check 2>&1 | tee "$out/check.txt"
echo "check rc=${PIPESTATUS[0]}"
echo "== sanitizer"
for tool in racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool "$bin" --backend cuda_sm90 small > "$out/sanitizer_$tool.txt" 2>&1
  echo "$tool rc=$? $(tail -2 "$out/sanitizer_$tool.txt" | tr '\n' ' ')"
done
echo "== bench"
for d in ${dims//,/ }; do timeout 200 "$bin" --backend cuda_sm90 bench "$d" 2>&1 | tee -a "$out/bench.txt"; done
echo "== peers"
PYTHONUNBUFFERED=1 timeout 240 python3 bench/sm90_sdpa_peers.py "$peer_dims" 2>&1 | grep -v Warning | tee "$out/peers.txt"
