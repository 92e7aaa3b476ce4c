#!/usr/bin/env bash
# Builds bench/sm90_forward_check without CMake: the sm90 translation units,
# the backend, the harness, compiled in parallel with nvcc for sm_90a, plus a
# per-kernel ptxas report and SASS opcode histogram of the main kernels.
#   bench/sm90_build_check.sh OUT_DIR
set -euo pipefail
out=${1:?out dir}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/obj"
gencode="-gencode=arch=compute_90a,code=sm_90a"
kernels=$(for v in 64 128 192 192X128 256; do for t in FP16 BF16; do printf -- "-DFLASHATTN_SM90_HAS_D%s_%s=1 " $v $t; done; done)
flags="-std=c++20 -O3 -lineinfo $gencode -I$root/src -I$root/include -DFLASHATTN_WITH_CUDA=1 -DFLASHATTN_WITH_SM90=1 $kernels"
sources=$(ls "$root"/src/cuda/sm90/*.cu; echo "$root/bench/sm90_forward_check.cu")
echo "$sources" | xargs -P "$(nproc)" -I{} sh -c 'nvcc '"$flags"' -Xptxas=-v -c {} -o '"$out"'/obj/$(basename {}).o 2> '"$out"'/obj/$(basename {}).ptxas.txt || { cat '"$out"'/obj/$(basename {}).ptxas.txt; exit 255; }'
g++ -std=c++20 -O2 -I"$root/include" -c "$root/src/api/status.cpp" -o "$out/obj/status.o"
nvcc $gencode "$out"/obj/*.o -o "$out/sm90_forward_check"
echo "built $out/sm90_forward_check"
