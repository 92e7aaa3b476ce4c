#!/usr/bin/env bash
# One device call: correctness, sanitizer, benchmark and SDPA peers, results under $OUT.
#   bench/sm90_gpu_run.sh BINARY [bench dims] [peer dims]
set -uo pipefail
bin=${1:?binary}
dims=${2:-128}
peer_dims=${3:-$dims}
out=${OUT:-/tmp/sm90-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee "$out/gpu.txt"
echo "== check"
timeout 180 "$bin" 2>&1 | tee "$out/check.txt"
echo "check rc=${PIPESTATUS[0]}"
echo "== sanitizer"
for tool in racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool "$bin" small > "$out/sanitizer_$tool.txt" 2>&1
  echo "$tool rc=$? $(tail -2 "$out/sanitizer_$tool.txt" | tr '\n' ' ')"
done
echo "== bench"
for d in ${dims//,/ }; do timeout 200 "$bin" bench "$d" 2>&1 | tee -a "$out/bench.txt"; done
echo "== peers"
PYTHONUNBUFFERED=1 timeout 240 python3 bench/sm90_sdpa_peers.py "$peer_dims" 2>&1 | grep -v Warning | tee "$out/peers.txt"
