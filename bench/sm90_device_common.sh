# shellcheck shell=bash disable=SC2154  # out, bld, py: set by the sourcing script
# Sourced by the sm90 A/B device scripts (sm90c_run.sh, sm90d_run.sh, sm90e_run.sh). The caller sets
# out (the results folder), bld (the build root), py (python3) and defines log(), or calls
# device_call_begin for all but out and bld.

# device_call_begin: what every device call of bench/integration starts with: CUDA's tools on PATH, t0, py,
# log MESSAGE (elapsed seconds, appended to $out/summary.txt), the GPU's state in the summary, and the sm80
# kernels compiled for the build's arch list (90a) instead of their sm_80 / compute_80 gencode.
device_call_begin() {
  export PATH=$PATH:/usr/local/cuda/bin
  t0=$(date +%s)
  py=$(command -v python3)
  log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw \
    --format=csv,noheader | tee -a "$out/summary.txt"
  sed -i 's/^set(FLASHATTN_SM80_GENCODE .*)$/set(FLASHATTN_SM80_GENCODE)/' src/cuda/CMakeLists.txt
}

# sm90_build_py NAME FLAGS [JOBS] [TIMEOUT] [CMAKE ARGS...]: the Python extension of this tree built
# with CUDA flags FLAGS (90a, bf16, head dims $PY_DIMS, default 128) into $bld/py-NAME, installed under
# $bld/pyroot as package flashattn_NAME ("new" as flashattn itself) with its torch.library namespace
# renamed, so several builds load side by side in one process (bench/sm90_ab.py).
sm90_build_py() {
  local name=$1 flags=$2 jobs=${3:-6} limit=${4:-220} pkg=flashattn_$1
  shift $(( $# < 4 ? $# : 4 ))
  [[ $name == new ]] && pkg=flashattn
  cmake -S . -B "$bld/py-$name" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a \
    -DFLASHATTN_HEAD_DIMS="${PY_DIMS:-128}" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
    -DFLASHATTN_BUILD_PYTHON=ON -DPython_EXECUTABLE="$py" -DCMAKE_CUDA_FLAGS="$flags" "$@" \
    >"$out/py_${name}_configure.log" 2>&1 &&
    timeout "$limit" cmake --build "$bld/py-$name" -j "$jobs" --target _C >"$out/py_${name}_build.log" 2>&1 &&
    rm -rf "$bld/pyroot/$pkg" && mkdir -p "$bld/pyroot/$pkg" && cp -r python/flashattn/. "$bld/pyroot/$pkg/" &&
    cp "$bld/py-$name"/python/_C*.so "$bld/pyroot/$pkg/" &&
    if [[ $pkg != flashattn ]]; then sed -i "s/\"flashattn::/\"$pkg::/" "$bld/pyroot/$pkg/_ops.py"; fi
  log "py $name ($flags) build rc=$?"
}

# sm90_sass_counts BUILD_DIR: one line per sm90 forward kernel of that build: its HGMMA and LDL/STL
# counts (cuobjdump; prints nothing where cuobjdump is missing).
sm90_sass_counts() {
  command -v cuobjdump >/dev/null || return 0
  local o
  for o in "$1"/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim*.cu.o; do
    cuobjdump -sass "$o" | awk -v f="$(basename "$o")" '
      /Function : .*forward_kernel/ {name = $3; next}
      /Function :/ {name = ""}
      name != "" && /HGMMA/ {h[name]++}
      name != "" && /LDL|STL/ {l[name]++}
      END {for (n in h) printf "%s %s HGMMA %d LDL/STL %d\n", f, substr(n, 1, 100), h[n], l[n] + 0}'
  done
}
