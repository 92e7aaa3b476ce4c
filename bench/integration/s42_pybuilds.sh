#!/usr/bin/env bash
# Session 42: why final42.sh read flash_attn_func's no-gradient host time at 74.8 us on the full build (sm80
# kernels with their own sm_80 gencode, every head dim and dtype) against 34-44 on the s42_* builds (the sm80
# kernels for 90a only, d64 / d128 bf16). Two Python builds with the backward: A as s42_py.sh's (d128 bf16, the
# sm80 gencode dropped as device_call_begin does), B as scripts/gpu_check.sh's (archs 80;90a, every head dim and
# dtype). Then bench/python_overhead.py on A, B, A, with the GPU's backlog per call (host-bound or not).
# Prediction: host noise, not the build: A and B within ~10% of each other, no backlog.
# One H200 call (~5 minutes).
#   bash bench/integration/s42_pybuilds.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
cp src/cuda/CMakeLists.txt /tmp/s42b-cmakelists # device_call_begin drops the sm80 gencode; build B keeps it
device_call_begin s42b
tree_copy "$bld/tree-b"
cp /tmp/s42b-cmakelists "$bld/tree-b/src/cuda/CMakeLists.txt"
PY_DIMS=128 sm90_build_py a "" 4 300 -DFLASHATTN_BACKWARD=ON &
(cd "$bld/tree-b" && PY_DIMS="32;64;96;128;160;192;224;256" sm90_build_py b "" 12 330 -DFLASHATTN_BACKWARD=ON \
  -DFLASHATTN_CUDA_ARCHS="80;90a" -DFLASHATTN_DTYPES="fp16;bf16") &
wait
rm -f "$out"/py_*_configure.log
for build in a b a; do
  # each build as the package flashattn, alone on the path
  rm -rf "$bld/run" && mkdir -p "$bld/run" && cp -r "$bld/pyroot/flashattn_$build" "$bld/run/flashattn" &&
    sed -i "s/\"flashattn_$build::/\"flashattn::/" "$bld/run/flashattn/_ops.py"
  PYTHONPATH=$bld/run timeout 150 python3 bench/python_overhead.py --calls 2000 2>&1 | grep -v Warning |
    sed "s/^{/{\"build\": \"$build\", /" | tee -a "$out/pybuilds.jsonl"
  log "python_overhead $build rc=$?"
done
