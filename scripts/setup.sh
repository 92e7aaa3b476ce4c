#!/usr/bin/env bash
# Quick start, step 1 of 2: install what is missing, configure, build, and run
# `flashattn bench` on the best backend present.
#
#   scripts/setup.sh               everything
#   scripts/setup.sh --deps-only   only install missing packages (used by scripts/test.sh)
#
# Environment: FLASHATTN_PRESET (default "default": CUDA backends when nvcc is
# found), FLASHATTN_CMAKE_ARGS (extra configure arguments, e.g.
# "-DFLASHATTN_HEAD_DIMS=128 -DFLASHATTN_CUDA_ARCHS=80"), FLASHATTN_JOBS (build jobs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

deps_only=0
[[ "${1:-}" == "--deps-only" ]] && deps_only=1
preset="${FLASHATTN_PRESET:-default}"

log() { printf '\n== %s\n' "$*"; }

# ---------------------------------------------------------------------------
# 1. Packages. Each check looks for the thing itself (a command, a header, a
# runtime library), so nothing is installed that is already there.
missing=()
have() { command -v "$1" >/dev/null 2>&1; }

cmake_ok=0
if have cmake; then
  version=$(cmake --version | head -n1 | grep -oE '[0-9]+\.[0-9]+' | head -n1)
  if [[ "$(printf '%s\n3.25\n' "$version" | sort -V | head -n1)" == "3.25" ]]; then cmake_ok=1; fi
fi
((cmake_ok)) || missing+=(cmake)
have ninja || missing+=(ninja-build)
have g++ || missing+=(g++)
[[ -f /usr/include/gtest/gtest.h || -f /usr/local/include/gtest/gtest.h ]] || missing+=(libgtest-dev)
[[ -f /usr/include/CLI/CLI.hpp || -f /usr/local/include/CLI/CLI.hpp ]] || missing+=(libcli11-dev)
# clang with libFuzzer and OpenMP, for the fuzz preset (tests/fuzz): checked by
# compiling, since where the runtimes live differs between clang packagings.
if have clang++; then
  probe=$(mktemp -d)
  echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' >"$probe/f.cpp"
  if ! clang++ -fsanitize=fuzzer "$probe/f.cpp" -o "$probe/f" >/dev/null 2>&1; then
    missing+=("libclang-rt-$(clang++ -dumpversion | cut -d. -f1)-dev")
  fi
  echo 'int main() { return 0; }' >"$probe/o.cpp"
  clang++ -fopenmp "$probe/o.cpp" -o "$probe/o" >/dev/null 2>&1 || missing+=(libomp-dev)
  rm -rf "$probe"
else
  missing+=(clang libclang-rt-14-dev libomp-dev)
fi

if ((${#missing[@]})); then
  log "installing: ${missing[*]}"
  if ! have apt-get; then
    echo "error: apt-get not found; install the equivalents of: ${missing[*]}" >&2
    exit 1
  fi
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if ! have sudo; then
      echo "error: not root and no sudo; as root run: apt-get install ${missing[*]}" >&2
      exit 1
    fi
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: every required package is present"
fi
((deps_only)) && exit 0

# ---------------------------------------------------------------------------
# 2. Configure and build. Build jobs: one per core, but no more than one per
# 3 GiB of free memory (nvcc translation units are large).
if [[ -n "${FLASHATTN_JOBS:-}" ]]; then
  jobs="$FLASHATTN_JOBS"
else
  cores=$(nproc)
  mem_gib=$(awk '/MemAvailable/ {print int($2 / 1048576)}' /proc/meminfo 2>/dev/null || echo 4)
  jobs=$(( mem_gib / 3 < cores ? mem_gib / 3 : cores ))
  (( jobs >= 1 )) || jobs=1
fi
log "configure (preset $preset)"
# shellcheck disable=SC2086  # FLASHATTN_CMAKE_ARGS is a list of arguments
cmake --preset "$preset" ${FLASHATTN_CMAKE_ARGS:-}
log "build ($jobs jobs)"
start=$(date +%s)
cmake --build --preset "$preset" -j "$jobs"
echo "build took $(( $(date +%s) - start )) s"

# ---------------------------------------------------------------------------
# 3. What was built, and how fast it runs here.
cli="build/$preset/tools/cli/flashattn"
log "$cli info"
"$cli" info
log "$cli bench"
start=$(date +%s)
"$cli" bench
echo "bench took $(( $(date +%s) - start )) s"
echo
echo "Next: scripts/test.sh builds and runs every test."
