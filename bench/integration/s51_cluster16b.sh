#!/usr/bin/env bash
# Session 51 (issue 6), second call: bench/integration/s51_cluster16b.py over three extensions (d 64 / 128, bf16)
# built side by side: the tree before session 51 (s51_cluster16b.patch reversed), this tree, and this tree with
# CLUSTER_SLOTS=8; then bench/cluster_fit_probe.cu at the d = 128 and d = 64 decode kernels' shared memory.
# Prediction: base's 1000-key rows at session 50's times (6.8 / 8.6 / 9.9 us, d64 7.6); new's the same if the
# +0.7 us of s51_cluster16.sh came from the row order, slots8's if from the layout; one K/V head: new 10.1 /
# 15.2 / 24.1 us at 4k / 16k / 65k keys against base's 10.1 / 18.2 / 54; the probe: fewer than 8 clusters of
# 15-16 at 1 CTA per SM (s51_cluster16.sh's 8 tiles did not take 16).
#   bash bench/integration/s51_cluster16b.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s51b
tree_copy "$bld/base-tree" bench/integration/s51_cluster16b.patch -R
(cd "$bld/base-tree" && PY_DIMS="64;128" sm90_build_py base "" 5 300) &
PY_DIMS="64;128" sm90_build_py slots8 "-DFLASHATTN_SM90_CLUSTER_SLOTS=8" 5 300 &
PY_DIMS="64;128" sm90_build_py new "" 6 300
wait
nvcc -std=c++17 -arch=sm_90a -o "$bld/probe" bench/cluster_fit_probe.cu &&
  for bytes in 232440 186440 202488; do "$bld/probe" "$bytes" 128 | tee -a "$out/summary.txt"; done
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 240 python3 s51_cluster16b.py base new slots8) 2>&1 |
  grep -v Warning >"$out/cluster16b.jsonl"
log "cluster16b rc=$?"
ab_summary "$out/cluster16b.jsonl"
log total
