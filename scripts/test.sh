#!/usr/bin/env bash
# Quick start, step 2 of 2: build and run every test: the C++ suites through
# ctest and, when present, the Python tests (scripts/test_python.sh).
# Installs missing packages first (scripts/setup.sh --deps-only), so it also
# works on a fresh machine. Same environment variables as scripts/setup.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
preset="${FLASHATTN_PRESET:-default}"

scripts/setup.sh --deps-only

if [[ -n "${FLASHATTN_JOBS:-}" ]]; then
  jobs="$FLASHATTN_JOBS"
else
  cores=$(nproc)
  mem_gib=$(awk '/MemAvailable/ {print int($2 / 1048576)}' /proc/meminfo 2>/dev/null || echo 4)
  jobs=$(( mem_gib / 3 < cores ? mem_gib / 3 : cores ))
  (( jobs >= 1 )) || jobs=1
fi

start=$(date +%s)
# shellcheck disable=SC2086  # FLASHATTN_CMAKE_ARGS is a list of arguments
cmake --preset "$preset" ${FLASHATTN_CMAKE_ARGS:-} >/dev/null
cmake --build --preset "$preset" -j "$jobs"
build_s=$(( $(date +%s) - start ))
echo "build time: ${build_s} s"

status=0
start=$(date +%s)
ctest --preset "$preset" -j "$jobs" || status=1
ctest_s=$(( $(date +%s) - start ))
echo "C++ test time: ${ctest_s} s"

if [[ -x scripts/test_python.sh || -f scripts/test_python.sh ]]; then
  start=$(date +%s)
  bash scripts/test_python.sh || status=1
  echo "Python test time: $(( $(date +%s) - start )) s"
fi
exit "$status"
