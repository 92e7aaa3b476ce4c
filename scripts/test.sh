#!/usr/bin/env bash
# Quick start, step 2 of 2: build and run every test:
#   1. the C++ library, tool, examples and test binary (preset $FLASHATTN_PRESET);
#   2. the libFuzzer target, built with clang (preset fuzz), for its short CI run;
#   3. the Python tests, when scripts/test_python.sh exists;
#   4. ctest: every C++ suite, against every backend present (last, so its summary
#      line closes the output).
# Installs missing packages first (scripts/setup.sh --deps-only), so it also works
# on a fresh machine. Same environment variables as scripts/setup.sh, plus
# FLASHATTN_SKIP_FUZZ=1 to leave out step 2.
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
seconds_since() { echo $(( $(date +%s) - $1 )); }

start=$(date +%s)
# shellcheck disable=SC2086  # FLASHATTN_CMAKE_ARGS is a list of arguments
cmake --preset "$preset" ${FLASHATTN_CMAKE_ARGS:-} >/dev/null
cmake --build --preset "$preset" -j "$jobs"
echo "build time: $(seconds_since "$start") s"

status=0
if [[ -f tests/fuzz/CMakeLists.txt && "${FLASHATTN_SKIP_FUZZ:-0}" != 1 ]]; then
  start=$(date +%s)
  cmake --preset fuzz >/dev/null
  # Only the fuzzer's own targets: the regular library is not needed here.
  cmake --build --preset fuzz -j "$jobs" --target tests/fuzz/all
  ctest --preset fuzz || status=1
  echo "fuzz build + run time: $(seconds_since "$start") s"
fi

if [[ -f scripts/test_python.sh ]]; then
  start=$(date +%s)
  bash scripts/test_python.sh || status=1
  echo "Python test time: $(seconds_since "$start") s"
fi

# ctest lists every test that did not run (the CUDA suites skip without a GPU:
# hundreds of lines) after its summary; fold that list into one line so the
# summary stays at the end of the output.
fold_not_run() {
  awk '/^The following tests did not run:/ { folding = 1; next }
       folding && /^\t/ { n++; next }
       { if (folding) { printf "(%d tests did not run: skipped, e.g. CUDA suites without a GPU)\n", n; folding = 0 } print }
       END { if (folding) printf "(%d tests did not run: skipped, e.g. CUDA suites without a GPU)\n", n }'
}
start=$(date +%s)
ctest --preset "$preset" -j "$jobs" 2>&1 | fold_not_run || status=1
echo "C++ test time: $(seconds_since "$start") s"
exit "$status"
