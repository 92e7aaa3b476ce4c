#!/usr/bin/env bash
# Session 51's verification of its final tree (clusters of up to 16 pieces on the narrow decode tile, the count
# rule weighing them against the counter's, the launch's bisection to the largest fitting count): scripts/
# gpu_check.sh's build, tests and python steps (the full build, the ctest sm90_wgmma_pipelines, every C++ GPU
# suite, every pytest on the GPU), compute-sanitizer memcheck and racecheck on every KV-cache case of cuda_sm90
# (grid and drawn) and the workspace checks, synccheck on the cluster cases; then bench/integration/
# s51_final.py's rows: gpu_check's extension against the tree before session 51 (final51.patch reversed; built
# beside the checks, 4 jobs).
# Prediction: every suite passes, sanitizers clean; one K/V head 0.85 / 0.47 of base at 16100 / 65000 keys,
# d64 0.80; 8 tiles at 16100 keys 0.93-0.99 (paged64 0.94); the 1000-key rows within 1% of base (s51_cluster16b
# read +1-2.6% with the branching combine); d256 32/8 (4 rows: now 7 cluster pieces) below 1.
#   bash bench/integration/final51.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
export PATH=$PATH:/usr/local/cuda/bin
out=/tmp/f51b-base
bld=/tmp/f51b-build
py=$(command -v python3)
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld/pyroot"
tree_copy "$bld/base-tree" bench/integration/final51.patch -R >/dev/null
(cd "$bld/base-tree" && PY_DIMS="64;128;256" sm90_build_py base "" 4 500) &
GPU_CHECK_STEPS="build tests python" gpu_check_call /tmp/f51
gpu_check_sanitizers /tmp/f51 'Grid/KVCacheTest.*cuda_sm90*:Random/KVCacheRandomTest.*cuda_sm90*:ForwardWorkspace.*' 100 \
  memcheck racecheck
gpu_check_sanitizers /tmp/f51 'Grid/KVCacheTest.*cuda_sm90_20?_1x*:Grid/KVCacheTest.*cuda_sm90_21?_1x*' 60 synccheck
wait
cat "$out/summary.txt" >>"$OUT/summary.txt"
cp -r build/pyroot/flashattn "$bld/pyroot/flashattn"
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 150 python3 s51_final.py base new) 2>&1 |
  grep -v Warning >"$OUT/final.jsonl"
{
  echo "== final A/B rc=$?"
  grep "^#" "$OUT/final.jsonl"
  grep -c '"error"' "$OUT/final.jsonl" | sed 's/^/rows with errors: /'
  grep "sdpa" "$OUT/final.jsonl" | cut -c1-120
} >>"$OUT/summary.txt"
