#!/usr/bin/env bash
# Session 50's verification of its final tree (the narrow tile's cluster combine, CLUSTER_COMBINE, and the split
# count's rule for it): scripts/gpu_check.sh's build, tests and python steps (the full build, the ctest
# sm90_wgmma_pipelines, every C++ GPU suite, every pytest on the GPU), compute-sanitizer memcheck and racecheck on
# every KV-cache case of cuda_sm90 (grid and drawn) and the workspace checks, synccheck on the three cluster
# cases; then bench/integration/s50_cluster.py's rows: gpu_check's extension against the same tree built with
# CLUSTER_COMBINE=0 (the counter's combine and the old count rule; built beside the checks, 4 jobs).
# Prediction: every suite passes, sanitizers clean; the rows of s50_cluster.sh, and batch 4 at 1000 keys ~8.6 us
# (3 pieces) against 11.3 (0.76), d64 ~7.4 against 10.0.
#   bash bench/integration/final50b.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
export PATH=$PATH:/usr/local/cuda/bin
out=/tmp/f50b-base
bld=/tmp/f50b-build
py=$(command -v python3)
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld/pyroot"
tree_copy "$bld/base-tree" >/dev/null
(cd "$bld/base-tree" && PY_DIMS="64;128;256" sm90_build_py base "-DFLASHATTN_SM90_CLUSTER_COMBINE=0" 4 500) &
GPU_CHECK_STEPS="build tests python" gpu_check_call /tmp/f50
gpu_check_sanitizers /tmp/f50 'Grid/KVCacheTest.*cuda_sm90*:Random/KVCacheRandomTest.*cuda_sm90*:ForwardWorkspace.*' 100 \
  memcheck racecheck
gpu_check_sanitizers /tmp/f50 'Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_1x1500_b2_*:Grid/KVCacheTest.*cuda_sm90_*_1x2000_b1_*' \
  60 synccheck
wait
cat "$out/summary.txt" >>"$OUT/summary.txt"
cp -r build/pyroot/flashattn "$bld/pyroot/flashattn"
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 120 python3 s50_cluster.py base new) 2>&1 |
  grep -v Warning >"$OUT/cluster.jsonl"
{
  echo "== cluster A/B rc=$?"
  grep "^#" "$OUT/cluster.jsonl"
  grep -c '"error"' "$OUT/cluster.jsonl" | sed 's/^/rows with errors: /'
  grep "sdpa" "$OUT/cluster.jsonl" | cut -c1-120
} >>"$OUT/summary.txt"
