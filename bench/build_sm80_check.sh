#!/usr/bin/env bash
# Builds bench/sm80_forward_check without CMake (for a GPU machine before the
# full library builds): the generated sm_80 translation units, the backend, and
# the harness, compiled in parallel with nvcc.
#   bench/build_sm80_check.sh OUT_DIR [HEAD_DIMS] [DTYPES] [GENCODE...]
set -euo pipefail
out=${1:?out dir}
dims=${2:-"32;64;96;128;160;192;224;256"}
dtypes=${3:-"fp16;bf16"}
shift $(( $# >= 3 ? 3 : $# ))
gencode=${*:-"-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90"}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/gen" "$out/obj"
python3 "$root/src/cuda/generate_kernels.py" --out "$out/gen" --head-dims "$dims" --dtypes "$dtypes" > "$out/gen/list.txt"
flags="-std=c++20 -O3 -lineinfo $gencode -I$root/src -I$root/include -I$out/gen -DFLASHATTN_WITH_CUDA=1"
sources=$(cat "$out/gen/list.txt"; echo "$root/src/cuda/sm80/backend.cu"; echo "$root/src/cuda/sm80/kvcache_kernels.cu"; echo "$root/bench/sm80_forward_check.cu")
echo "$sources" | xargs -P "$(nproc)" -I{} sh -c 'nvcc '"$flags"' -Xptxas=-v -c {} -o '"$out"'/obj/$(basename {}).o 2> '"$out"'/obj/$(basename {}).ptxas.txt || { cat '"$out"'/obj/$(basename {}).ptxas.txt; exit 255; }'
g++ -std=c++20 -O2 -I"$root/include" -c "$root/src/api/status.cpp" -o "$out/obj/status.o"
nvcc $gencode "$out"/obj/*.o -o "$out/sm80_forward_check"
echo "built $out/sm80_forward_check"
