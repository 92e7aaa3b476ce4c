#!/usr/bin/env bash
# Local SASS check (helper sm90v, session 9): one sm90 forward TU of this tree compiled to a cubin with
# extra -D flags, disassembled, per-kernel instruction / HGMMA / BAR counts and ptxas's register lines.
#   bash bench/sm90v_cubin.sh TU_BASENAME OUTNAME [FLAGS...]   e.g. forward_hdim256_bf16 kr0 -DFLASHATTN_SM90_CONSUMER_KEY_RANGE=0
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tu=$1 name=$2
shift 2
out=/tmp/sm90v
mkdir -p "$out"
nvdisasm=${NVDISASM:-/tmp/nvdis/nvidia/cu13/bin/nvdisasm}
/usr/local/cuda/bin/nvcc -DFLASHATTN_WITH_CUDA=1 -DFLASHATTN_WITH_SM90=1 -I"$root/include" -I"$root/src" "$@" \
  -O3 -DNDEBUG -std=c++20 -gencode=arch=compute_90a,code=sm_90a -Xptxas=-v -cubin \
  "$root/src/cuda/sm90/$tu.cu" -o "$out/$tu-$name.cubin" 2>"$out/$tu-$name.ptxas"
"$nvdisasm" -c "$out/$tu-$name.cubin" >"$out/$tu-$name.sass"
# Kernels whose wgmma pipeline ptxas serialised (tools/kernels/resource_usage.py's reading of C7510-C7518, as the
# ctest sm90_wgmma_pipelines; session 33 found C7511, which this script's earlier pattern C751[458] missed), and the
# C7519 notes (a warpgroup.arrive injected: not a serialisation by itself).
echo "kernels with wgmma serialised: $(python3 "$root/tools/kernels/resource_usage.py" --ptxas "$out/$tu-$name.ptxas" |
  grep -c "wgmma_serialised" || true); C7519 arrives injected: $(grep -c "C7519" "$out/$tu-$name.ptxas" || true)"
awk '/^\.text\./ {name = ""; if ($0 ~ /forward_kernel/) {name = $0; sub(/^\.text\./, "", name); sub(/:$/, "", name)}; next}
     name != "" && /\/\*[0-9a-f]+\*\// {n[name]++; if (/HGMMA/) h[name]++; if (/ BAR\./) b[name]++; if (/LDL|STL/) l[name]++}
     END {for (k in n) printf "%6d instr %3d HGMMA %3d BAR %3d LDL/STL %s\n", n[k], h[k], b[k], l[k], substr(k, 50, 90)}' \
  "$out/$tu-$name.sass" | sort -k7
grep -A2 "Compiling entry.*forward_kernel" "$out/$tu-$name.ptxas" | grep -E "spill|registers" | tr -s ' ' | paste -sd' ' | head -c 600; echo
