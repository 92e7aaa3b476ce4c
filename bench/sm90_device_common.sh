# shellcheck shell=bash disable=SC2154  # out, bld, py: set by the sourcing script
# Sourced by the sm90 A/B device scripts (sm90c_run.sh, sm90d_run.sh, sm90e_run.sh). The caller sets
# out (the results folder), bld (the build root), py (python3) and defines log(), or calls
# device_call_begin for all but out and bld.

# device_call_begin [NAME]: what every device call of bench/integration starts with: CUDA's tools on PATH, t0, py,
# log MESSAGE (elapsed seconds, appended to $out/summary.txt), the GPU's state in the summary, and the sm80
# kernels compiled for the build's arch list (90a) instead of their sm_80 / compute_80 gencode. With NAME it also
# makes out=/tmp/NAME-out and bld=/tmp/NAME-build afresh and, on exit, copies the summary and every .jsonl of $out
# to $OUT (what the device call brings back); without, the caller has set out and bld.
device_call_begin() {
  if [[ -n ${1:-} ]]; then
    out=/tmp/$1-out
    bld=/tmp/$1-build
    rm -rf "$out" "$bld" && mkdir -p "$out" "$bld/pyroot"
    trap 'cp "$out/summary.txt" "$out"/*.jsonl "${OUT:-/tmp}/" 2>/dev/null' EXIT
  fi
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

# py_base_from_patch PATCH: the package flashattn_base beside sm90_build_py's "new" one: the same extension, with
# the Python of the tree before PATCH (a diff of python/flashattn, reversed here), its op namespace renamed.
py_base_from_patch() {
  local base=$bld/pyroot/flashattn_base
  rm -rf "$base" && cp -r "$bld/pyroot/flashattn" "$base" &&
    patch -R -p3 -s -d "$base" <"$1" &&
    sed -i 's/"flashattn::/"flashattn_base::/' "$base/_ops.py"
  log "base package ($1) rc=$?"
}

# py_builds_around_patch PATCH [CMAKE ARGS...]: two extensions (head dims $PY_DIMS, default 128; $PY_JOBS jobs
# each, default 8) side by side for a same-process A/B of a C++ change: the tree's (package flashattn) and the
# tree's with PATCH reversed (flashattn_base), built in parallel.
py_builds_around_patch() {
  local patch=$1 dims=${PY_DIMS:-128} jobs=${PY_JOBS:-8}
  shift
  tree_copy "$bld/base-tree" "$patch" -R
  (cd "$bld/base-tree" && PY_DIMS="$dims" sm90_build_py base "" "$jobs" 300 "$@") &
  PY_DIMS="$dims" sm90_build_py new "" "$jobs" 300 "$@"
  wait
  rm -f "$out"/py_*_configure.log
}

# tests_and_py_build DIMS: the C++ test binary and the Python extension of this tree for head dims DIMS (both
# dtypes, sm_90a) in $bld/full, the package under $bld/pyroot; tests=the test binary. TREE_CUDA_FLAGS: CUDA flags
# of that build (a switch's setting that the tests should run), none by default.
tests_and_py_build() {
  local start flags=()
  start=$(date +%s)
  [[ -n ${TREE_CUDA_FLAGS:-} ]] && flags=(-DCMAKE_CUDA_FLAGS="$TREE_CUDA_FLAGS")
  cmake -S . -B "$bld/full" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_HEAD_DIMS="$1" \
    -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=ON \
    -DPython_EXECUTABLE="$py" "${flags[@]}" >"$out/configure.log" 2>&1 &&
    timeout 300 cmake --build "$bld/full" -j 16 --target flashattn_tests _C >"$out/build.log" 2>&1
  log "build rc=$? in $(($(date +%s) - start)) s"
  mkdir -p "$bld/pyroot/flashattn" && cp -r python/flashattn/. "$bld/pyroot/flashattn/" &&
    cp "$bld/full"/python/_C*.so "$bld/pyroot/flashattn/"
  tests=$bld/full/tests/flashattn_tests
}

# tests_and_base_around_patch PATCH DIMS [CMAKE ARGS...]: the test binary and extension of this tree for head dims
# DIMS (tests_and_py_build: sets tests) and, in parallel, the extension of this tree with PATCH reversed as package
# flashattn_base (built with CMAKE ARGS, e.g. -DFLASHATTN_BACKWARD=ON): a same-process A/B of a kernel change
# whose tests run on the patched tree.
tests_and_base_around_patch() {
  local patch=$1 dims=$2
  shift 2
  tree_copy "$bld/base-tree" "$patch" -R || return 1
  (cd "$bld/base-tree" && PY_DIMS="$dims" sm90_build_py base "" 6 400 "$@") &
  tests_and_py_build "$dims"
  wait
}

# backward_compare_vs_base NAME LIMIT ARGS...: bench/backward_compare.py with ARGS (LIMIT seconds), this tree's
# package beside flashattn_base (tests_and_base_around_patch); rows in $out/NAME.jsonl, the last stderr lines in
# the summary.
backward_compare_vs_base() {
  local name=$1 limit=$2
  shift 2
  (PYTHONPATH=$bld/pyroot timeout "$limit" python3 bench/backward_compare.py --base-package flashattn_base "$@" \
    --out "$out/$name.json" >"$out/$name.jsonl" 2>"$out/$name.err")
  log "compare rc=$? $(tail -2 "$out/$name.err" | cut -c1-300)"
  python3 bench/backward_ab_table.py "$out/$name.jsonl" >>"$out/summary.txt"
}

# tree_and_flag_base DIMS FLAGS [CMAKE ARGS...]: the test binary and extension of this tree for head dims DIMS
# (tests_and_py_build: sets tests) and, in parallel, the extension built with CUDA flags FLAGS (and CMAKE ARGS, e.g.
# -DFLASHATTN_BACKWARD=ON) as package flashattn_base (a switch's A/B).
tree_and_flag_base() {
  local dims=$1 cuda_flags=$2
  shift 2
  PY_DIMS="$dims" sm90_build_py base "$cuda_flags" 5 400 "$@" &
  tests_and_py_build "$dims"
  wait
  rm -f "$out"/py_*_configure.log
}

# gtest_suites FILTER LIMIT: the cases FILTER of the test binary $tests (LIMIT seconds), their counts and first
# failures in the summary.
gtest_suites() {
  timeout "$2" "$tests" --gtest_filter="$1" --gtest_brief=1 >"$out/tests.log" 2>&1
  log "suites rc=$?"
  grep -E '^\[  (PASSED|SKIPPED)' "$out/tests.log" | tee -a "$out/summary.txt"
  grep -E 'FAILED  \]|Failure' "$out/tests.log" | cut -c1-200 | head -40 | tee -a "$out/summary.txt"
}

# py_tests_on_gpu FILE...: the given tests/python files with the package(s) under $bld/pyroot, run from /tmp (so
# that the tree's python/ is not imported); pytest.txt in $out, its counts and failures in summary.txt.
py_tests_on_gpu() {
  local files=() f
  for f in "$@"; do files+=("$PWD/tests/python/$f"); done
  (cd /tmp && PYTHONPATH=$bld/pyroot timeout 300 python3 -m pytest -q -p no:cacheprovider -rs "${files[@]}") \
    >"$out/pytest.txt" 2>&1
  log "pytest rc=$?"
  grep -E "passed|failed|FAILED|ERROR" "$out/pytest.txt" | tail -8 | cut -c1-300 >>"$out/summary.txt"
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

# ab_summary FILE: the '#' lines (medians and ratios), SDPA's rows, the count of rows with an error and the largest
# max_err of FILE, an A/B script's JSON lines (bench/integration/s46_decode_ab.py's form), appended to the summary.
ab_summary() {
  {
    grep "^#" "$1"
    grep "sdpa" "$1" | cut -c1-160
    grep -c "error" "$1" | sed 's/^/rows with errors: /'
    grep -o '"max_err": [0-9.]*' "$1" | sort -t: -k2 -g | tail -1 | sed 's/^/largest /'
  } >>"$out/summary.txt"
}

# decode_trace_build PATCH DIMS JOBS: this tree with PATCH (a decode trace: s47_narrowtrace.patch, s48_trace.patch)
# copied to $bld/trace-tree, its library for head dims DIMS (bf16, sm_90a) and bench/decode_trace_driver.cu linked
# (the patched tree's own driver) against it as $bld/trace; the build's log tail in the summary.
decode_trace_build() {
  tree_copy "$bld/trace-tree" "$1" &&
    cmake -S "$bld/trace-tree" -B "$bld/lib" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a \
    -DFLASHATTN_HEAD_DIMS="$2" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF \
    -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF >"$out/lib.log" 2>&1 &&
    timeout 300 cmake --build "$bld/lib" --target flashattn -j "$3" >>"$out/lib.log" 2>&1 &&
    nvcc -std=c++20 -O2 -I"$bld/trace-tree/include" "$bld/trace-tree/bench/decode_trace_driver.cu" \
      "$bld/lib/src/libflashattn.a" -Xcompiler -fopenmp -o "$bld/trace" >>"$out/lib.log" 2>&1
  log "trace build rc=$?"
  tail -3 "$out/lib.log" >>"$out/summary.txt"
}

# switch_ab_checks DIMS FLAGS SUITES CASES: a switch's A/B call's checks: the tree's test binary and extension for head
# dims DIMS beside the extension built with FLAGS (tree_and_flag_base: sets tests), the decode kernels' SASS counts,
# the gtest cases SUITES (200 s) and memcheck / racecheck / synccheck on the cases CASES (100 s each).
switch_ab_checks() {
  tree_and_flag_base "$1" "$2"
  sm90_sass_counts "$bld/full" | grep -E "Li1ELi0ELi1ELb0" | tee -a "$out/summary.txt"
  gtest_suites "$3" 200
  sanitizer_runs "$tests" "$4" 100 memcheck racecheck synccheck
}

# decode_rows_ab ROWS LIMIT: bench/integration/s46_decode_dims.py's FLASHATTN_DIMS_ROWS=ROWS rows, package flashattn_base
# against flashattn ("new") under $bld/pyroot (LIMIT seconds), into $out/ROWS.jsonl, its medians in the summary.
decode_rows_ab() {
  (cd bench/integration && PYTHONPATH=$bld/pyroot FLASHATTN_DIMS_ROWS=$1 timeout "$2" python3 s46_decode_dims.py base new) \
    2>&1 | grep -v Warning >"$out/$1.jsonl"
  log "$1 A/B rc=$?"
  ab_summary "$out/$1.jsonl"
}

# split_sweep ROWS LIMIT NAME: bench/integration/s46_dims_rule.py's FLASHATTN_DIMS_ROWS=ROWS rows (the automatic split
# count against explicit ones) on the package under $bld/pyroot, into $out/NAME.jsonl, its '#' lines in the summary.
split_sweep() {
  (cd bench/integration && PYTHONPATH=$bld/pyroot FLASHATTN_DIMS_ROWS=$1 timeout "$2" python3 s46_dims_rule.py) 2>&1 |
    grep -v Warning >"$out/$3.jsonl"
  log "split sweep $1 rc=$?"
  grep "^#" "$out/$3.jsonl" >>"$out/summary.txt"
}

# sanitizer_runs TESTS FILTER LIMIT TOOL...: compute-sanitizer's TOOLs on the cases FILTER of the test binary TESTS
# (LIMIT seconds each): per tool a log line (its summary, the cases' counts) and its first reports in the summary.
sanitizer_runs() {
  local tests=$1 filter=$2 limit=$3 tool
  shift 3
  for tool in "$@"; do
    timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_brief=1 \
      --gtest_filter="$filter" >"$out/$tool.log" 2>&1
    log "$tool rc=$? $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool.log") $(grep -E '^\[  (PASSED|SKIPPED|FAILED)' "$out/$tool.log" | cut -c1-120 | tr '\n' ' ')"
    grep -E -m2 -A6 '^========= (Invalid|Misaligned|Error|Race|Barrier)' "$out/$tool.log" | cut -c1-200 >>"$out/summary.txt"
  done
}

# tree_copy DEST [PATCH [-R]]: this tree (without .git and bench/results) copied to DEST, PATCH applied there
# (-R: reversed), so a variant builds beside the tree itself (sm90_build_py in a subshell that cd's to DEST).
# shellcheck disable=SC2086  # ${3:-} below is -R or nothing: unquoted, so that patch gets no empty argument
tree_copy() {
  rm -rf "$1" && mkdir -p "$1" && tar --exclude=./.git --exclude=./bench/results -cf - . | tar -C "$1" -xf - &&
    if [[ -n ${2:-} ]]; then (cd "$1" && patch -p1 -s ${3:-} <"$OLDPWD/$2"); fi
  local rc=$?
  log "tree $1 ${2:-} ${3:-} rc=$rc"
  return $rc
}

# sm90_ctrl_copy [FROM]: build FROM's extension (default base; "new" is the package flashattn) installed a second
# time as flashattn_ctrl (identical kernels: its ratio to FROM is the run's noise floor).
sm90_ctrl_copy() {
  local from=flashattn_${1:-base}
  [[ ${1:-base} == new ]] && from=flashattn
  rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/$from" "$bld/pyroot/flashattn_ctrl" &&
    sed -i "s/\"$from::/\"flashattn_ctrl::/" "$bld/pyroot/flashattn_ctrl/_ops.py"
}

# decode_ab PASS BUILDS [TIMEOUT] [SHAPES]: bench/decode_ab.py over those builds (and shapes, a comma list; default
# its decode rows), each line tagged with PASS and appended to $out/decode.jsonl.
decode_ab() {
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "${3:-100}" python3 bench/decode_ab.py --builds "$2" --rep 60 \
    ${4:+--shapes "$4"} 2>&1 |
    grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" | tee -a "$out/decode.jsonl"
  log "decode $1"
}

# sm90_ab PASS BUILDS HDIMS CAUSAL SEQLENS [REP] [TIMEOUT]: bench/sm90r_ab.py over those rows, each line tagged with
# PASS and appended to $out/ab.jsonl (bench/integration/ab_summary.py reads it).
sm90_ab() {
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "${7:-200}" python3 bench/sm90r_ab.py --builds "$2" --hdims "$3" \
    --causal "$4" --seqlens "$5" --rep "${6:-60}" 2>&1 | grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" |
    tee -a "$out/ab.jsonl"
  log "ab $1 d $3 causal $4"
}

# sm90_ab_passes "PASS BUILDS;PASS BUILDS..." "HDIMS..." SEQLENS [REP] [TIMEOUT]: sm90_ab for every pass (each
# with its own build order), head dim (in the order given) and masking (causal first) over the same seqlens.
sm90_ab_passes() {
  local pass_list pass d causal hdims=$2 seqlens=$3 rep=${4:-60} limit=${5:-100}
  IFS=';' read -ra pass_list <<<"$1"
  for pass in "${pass_list[@]}"; do
    for d in $hdims; do
      for causal in 1 0; do sm90_ab "${pass%% *}" "${pass#* }" "$d" "$causal" "$seqlens" "$rep" "$limit"; done
    done
  done
}

# test_build SRC HEAD_DIMS DTYPES CUDA_FLAGS [JOBS]: the C++ test binary of source tree SRC (forward only, 90a,
# those head dims and dtypes, CUDA flags) built into $bld/tests.
test_build() {
  cmake -S "$1" -B "$bld/tests" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_HEAD_DIMS="$2" \
    -DFLASHATTN_DTYPES="$3" -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_PYTHON=OFF \
    -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DCMAKE_CUDA_FLAGS="$4" >"$out/tests_configure.log" 2>&1 &&
    timeout 300 cmake --build "$bld/tests" --target flashattn_tests -j "${5:-6}" >"$out/tests_build.log" 2>&1
  log "test build rc=$?"
}

# test_cli_build HEAD_DIMS DTYPES [JOBS] [CUDA_FLAGS]: the C++ test binary and the CLI of this tree (forward only,
# 90a, CUDA flags default or CUDA_FLAGS) built into $bld/tests ($bld/tests/tests/flashattn_tests,
# $bld/tests/tools/cli/flashattn).
test_cli_build() {
  cmake -S . -B "$bld/tests" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_HEAD_DIMS="$1" \
    -DFLASHATTN_DTYPES="$2" -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_PYTHON=OFF \
    -DFLASHATTN_BUILD_CLI=ON -DFLASHATTN_BUILD_EXAMPLES=OFF -DCMAKE_CUDA_FLAGS="${4:-}" >"$out/tests_configure.log" 2>&1 &&
    timeout 300 cmake --build "$bld/tests" -j "${3:-10}" >"$out/tests_build.log" 2>&1
  log "test + CLI build rc=$?"
}

# switch_builds NAME FLAGS TEST_DIMS PY_DIMS [LIMIT]: for a one-switch A/B, in parallel: the C++ tests and CLI
# with FLAGS (TEST_DIMS, fp16 + bf16; test_cli_build) and the Python extension twice (base, and NAME with FLAGS;
# PY_DIMS); the configure logs are dropped from $out (a device call returns fewer than eight files).
switch_builds() {
  test_cli_build "$3" "fp16;bf16" 8 "$2" &
  PY_DIMS="$4" sm90_build_py base "" 4 "${5:-400}" &
  PY_DIMS="$4" sm90_build_py "$1" "$2" 4 "${5:-400}" &
  wait
  rm -f "$out"/py_*_configure.log "$out"/tests_configure.log
}

# default_vs_old HDIM OLD_FLAGS: a kept default against the tree built with the switch that undoes it (OLD_FLAGS),
# both Python extensions (head dim HDIM, bf16) built in parallel, a control copy of the old one, two passes over that
# head dim's rows (causal and not, 512..16k) beside cuDNN, and ab_summary's table in the summary.
default_vs_old() {
  PY_DIMS=$1 sm90_build_py old "$2" 8 400 &
  PY_DIMS=$1 sm90_build_py new "" 8 400 &
  wait
  rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
  sm90_ctrl_copy old
  sm90_ab_passes "p1 old,new,ctrl;p2 ctrl,new,old" "$1" 512,1024,2048,4096,8192,16384 60 120
  python3 bench/integration/ab_summary.py "$out/ab.jsonl" old new ctrl | tee -a "$out/summary.txt"
}

# suites_and_racecheck SUITE_FILTER RACE_FILTER [TIMEOUT]: test_build's binary on the GPU suites of that gtest
# filter (into $out/tests.txt), then racecheck on the second filter; one summary line each.
suites_and_racecheck() {
  local tests=$bld/tests/tests/flashattn_tests
  [[ -x $tests ]] || { log "no test binary"; return; }
  timeout "${3:-100}" "$tests" --gtest_filter="$1" --gtest_brief=1 >"$out/tests.txt" 2>&1
  log "suites rc=$? $(tail -2 "$out/tests.txt" | tr '\n' ' ')"
  timeout 60 compute-sanitizer --tool racecheck --error-exitcode 3 "$tests" --gtest_filter="$2" --gtest_brief=1 \
    >"$out/racecheck.txt" 2>&1
  log "racecheck rc=$? $(grep -m1 'SUMMARY' "$out/racecheck.txt")"
}

# sass_profile ROWS NAME [TIMEOUT]: PC samples (ncu SourceCounters + WarpStateStats) of the forward kernels of the
# Python build "new" (sm90_build_py new "-lineinfo") over bench/ncu_grid_target.py's ROWS (d:causal:seqlen,...): the
# per-SASS-instruction page gzipped to $out/sass_NAME.csv.gz, the details page to $out/details_NAME.csv.
sass_profile() {
  local rep=$bld/profile-$2
  PYTHONPATH=$bld/pyroot timeout "${3:-150}" ncu --section SourceCounters --section WarpStateStats \
    --profile-from-start off --kernel-name regex:forward_kernel -o "$rep" -f python3 bench/ncu_grid_target.py \
    --rows "$1" --builds new >"$out/ncu_$2.log" 2>&1
  log "ncu $2 rc=$?"
  ncu -i "$rep.ncu-rep" --page source --csv --print-source sass 2>/dev/null | gzip >"$out/sass_$2.csv.gz"
  ncu -i "$rep.ncu-rep" --page details --csv >"$out/details_$2.csv" 2>/dev/null
  log "pages $2: $(stat -c %s "$out/sass_$2.csv.gz") B"
}

# suites_summary: suites_and_racecheck's result lines (passed, failed, skipped, failures) into the summary; the full
# log is dropped (a device call returns fewer than eight files).
suites_summary() {
  grep -E "^\[  (PASSED|FAILED|SKIPPED)|Failure" "$out/tests.txt" | head -30 >>"$out/summary.txt"
  rm -f "$out/tests.txt"
}

# synccheck_on FILTER [TIMEOUT]: compute-sanitizer synccheck over the test binary's FILTER, its summary line logged.
synccheck_on() {
  timeout "${2:-60}" compute-sanitizer --tool synccheck --error-exitcode 3 "$bld/tests/tests/flashattn_tests" \
    --gtest_filter="$1" --gtest_brief=1 >"$bld/synccheck.txt" 2>&1
  log "synccheck rc=$? $(grep -m1 'SUMMARY' "$bld/synccheck.txt")"
}

# varlen_checks [TIMEOUT]: test_build's binary on the sm90 varlen and KV-cache suites (per-sequence maps in every
# case), then racecheck and synccheck on the d128 varlen cases and the d256 VarlenTest ones, summary lines only.
varlen_checks() {
  local race='*Varlen*cuda_sm90*d128*:*VarlenTest*cuda_sm90*d256*'
  suites_and_racecheck '*Varlen*cuda_sm90*:*KVCache*cuda_sm90*' "$race" "${1:-150}"
  suites_summary
  synccheck_on "$race" 60
}

# multicast_checks [TIMEOUT]: the test binary's sm90 suites, then racecheck and synccheck on the Spread cases that run
# the K/V multicast (cluster) kernels (d128 / d256 at 2304 keys, d256 causal at 4352, d128 causal at 8192), with
# summary lines only.
multicast_checks() {
  local race='*Spread*cuda_sm90*2304*:*Spread*cuda_sm90*4352*:*Spread*cuda_sm90*x8192*'
  suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" "${1:-150}"
  suites_summary
  synccheck_on "$race"
  rm -f "$out/racecheck.txt"
}

# sweep_builds DIMS JOBS NAME=FLAGS...: the Python builds "base" (default flags) and each NAME (its CUDA FLAGS) of
# head dims DIMS, all at once with JOBS compile jobs each, then the control copy of base (sm90_ctrl_copy); the
# build logs are dropped. Leaves the build names, base and ctrl first, in $sweep_names (comma-separated).
sweep_builds() {
  local dims=$1 jobs=$2 variant
  shift 2
  sweep_names=base,ctrl
  PY_DIMS=$dims sm90_build_py base "" "$jobs" 400 &
  for variant in "$@"; do
    PY_DIMS=$dims sm90_build_py "${variant%%=*}" "${variant#*=}" "$jobs" 400 &
    sweep_names+=",${variant%%=*}"
  done
  wait
  rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
  sm90_ctrl_copy
}

# paired_passes BUILDS HDIMS CAUSAL SEQLENS [PASSES] [TIMEOUT]: bench/sm90r_ab.py with interleaved timing only
# (--paired 30 --paired-only; cuDNN alone on do_bench) over those rows, PASSES times (p1, p2, ...), one process per
# head dim (a head dim SDPA's cuDNN refuses then costs only its own rows), appended to $out/ab.jsonl.
paired_passes() {
  local builds=$1 hdims=$2 causal=$3 seqlens=$4 passes=${5:-3} limit=${6:-100} pass d
  for ((pass = 1; pass <= passes; ++pass)); do
    for d in ${hdims//,/ }; do
      PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "$limit" python3 bench/sm90r_ab.py --builds "$builds" \
        --hdims "$d" --causal "$causal" --seqlens "$seqlens" --rep 30 --paired 30 --paired-only 2>&1 |
        grep -v Warning | sed "s/^{/{\"pass\": \"p$pass\", /" >>"$out/ab.jsonl"
      log "ab p$pass d $d causal $causal"
    done
  done
}

# sustained_rows BUILDS HDIMS CAUSAL SEQLENS TAG [STINT_MS] [TIMEOUT]: bench/sm90r_ab.py --sustained 5 (interleaved
# stints of STINT_MS, default 150, with cuDNN interleaved last) over those rows, each line tagged "pass": TAG and
# appended to $out/ab.jsonl.
sustained_rows() {
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "${7:-100}" python3 bench/sm90r_ab.py --builds "$1" --hdims "$2" \
    --causal "$3" --seqlens "$4" --sustained 5 --sustained-ms "${6:-150}" 2>&1 | grep -v Warning |
    sed "s/^{/{\"pass\": \"$5\", /" >>"$out/ab.jsonl"
}

# stint_passes BUILDS HDIM N CAUSAL:SEQLENS...: N passes (p1..pN) of sustained_rows over BUILDS at head dim HDIM, each
# CAUSAL:SEQLENS in turn (400 ms stints, cuDNN interleaved), the record copied to $OUT after each pass.
stint_passes() {
  local builds=$1 d=$2 n=$3 pass spec
  shift 3
  for ((pass = 1; pass <= n; pass++)); do
    for spec in "$@"; do sustained_rows "$builds" "$d" "${spec%%:*}" "${spec#*:}" "p$pass" 400 200; done
    log "stints p$pass"
    cp "$out/ab.jsonl" "${OUT:-/tmp}/" 2>/dev/null
  done
}

# standing_pass PASS: the standing's rows (s27_standing.sh's method): sustained_rows of the build "new" over every
# head dim (64, 128, 256), causal and not, 512..16k, 400 ms stints with cuDNN interleaved, tagged "pPASS".
standing_pass() {
  local d
  for d in 64 128 256; do
    sustained_rows new "$d" 1,0 512,1024,2048,4096,8192,16384 "p$1" 400 150
    log "sustained standing p$1 d $d"
  done
}

# compare_grid ROUNDS [TIMEOUT]: bench/compare.py's forward grid and decode row (the standing's method) into $out, its
# tables printed.
compare_grid() {
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "${2:-330}" python3 bench/compare.py --modes fwd --rounds "$1" \
    --out "$out" --tag "$(date +%Y%m%d-%H%M%S)-fwd" >"$out/compare_fwd.log" 2>&1
  log "compare fwd rc=$?"
  sed -n '/^# /,$p' "$out/compare_fwd.log" | head -50
}

# build_check_or_stop BUILDS HDIMS SHAPES [TIMEOUT]: bench/build_check.py over those Python builds (comma lists; SHAPES
# as build_check's --shapes) into $out/check.txt, one summary line; fails if any build or shape failed, so that the
# calling script stops there (`build_check_or_stop ... || exit 1`) instead of timing wrong kernels.
build_check_or_stop() {
  PYTHONPATH=$bld/pyroot timeout "${4:-150}" python3 bench/build_check.py --builds "$1" --hdims "$2" --shapes "$3" \
    >"$out/check.txt" 2>&1
  local rc=$?
  log "build_check rc=$rc $(grep -c '^ok' "$out/check.txt") ok, $(grep -c '^FAIL' "$out/check.txt") FAIL"
  [[ $rc == 0 ]]
}

# trace_cli_build TREE [JOBS] [FLAGS]: the CLI of source tree TREE (a tree_copy with one of the trace patches,
# bench/integration/s39_*trace.patch, s40_timeline.patch) for head dims $TRACE_DIMS (default 128), bf16, with
# SPLIT_TAIL=1 (which session 39's traces ride on) and the CUDA flags FLAGS, into $bld/$TRACE_CLI (default cli).
trace_cli_build() {
  local dir=$bld/${TRACE_CLI:-cli}
  cmake -S "$1" -B "$dir" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_HEAD_DIMS="${TRACE_DIMS:-128}" \
    -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
    -DFLASHATTN_BUILD_CLI=ON -DFLASHATTN_BUILD_EXAMPLES=OFF \
    -DCMAKE_CUDA_FLAGS="-DFLASHATTN_SM90_SPLIT_TAIL=1 ${3:-}" >"$out/cli_configure_${TRACE_CLI:-cli}.log" 2>&1 &&
    timeout 300 cmake --build "$dir" --target flashattn_cli -j "${2:-16}" >"$out/cli_build_${TRACE_CLI:-cli}.log" 2>&1
  log "trace CLI ${TRACE_CLI:-cli} (${3:-}) build rc=$?"
  rm -f "$out/cli_configure_${TRACE_CLI:-cli}.log"
}

# timeline_run NAME: trace_cli_build's CLI $bld/cli-NAME (built with s40_timeline.patch, TRACE_DIMS=256) on d256
# causal 4k (b 4, 8 heads, 5 calls; FLASHATTN_TAIL_TRACE dumps the last one's workspace): its time and speed and
# bench/timeline_trace.py's span, loop ends, tiles and idle shares appended to the summary.
timeline_run() {
  {
    echo "== $1: d256 causal 4096 (b 4)"
    FLASHATTN_TAIL_TRACE=$bld/trace.bin timeout 60 "$bld/cli-$1/tools/cli/flashattn" run --backend cuda_sm90 \
      --repeat 5 --verify none -b 4 --heads 8 --seqlen-q 4096 --seqlen-k 4096 --head-dim 256 --causal 2>&1 |
      grep -E "^(time|speed)"
    python3 bench/timeline_trace.py "$bld/trace.bin" 2>&1 | grep -E "^(span|loop end|tiles per|idle)"
  } >>"$out/summary.txt"
  log "run $1"
}

# trace_cli_runs READER FILE [READER_ARGS...]: trace_cli_build's CLI ($TRACE_CLI) on the d128 non-causal grid rows of 2k / 4k / 16k
# keys (5 calls each; FLASHATTN_TAIL_TRACE dumps the last one's workspace), its output and bench/READER's reading of
# the dump appended to $out/FILE.
trace_cli_runs() {
  local reader=$1 file=$2 s b
  shift 2
  for s in 2048 4096 16384; do
    b=$((16384 / s))
    FLASHATTN_TAIL_TRACE=$bld/trace_$s.bin timeout 60 "$bld/${TRACE_CLI:-cli}/tools/cli/flashattn" run --backend cuda_sm90 \
      --repeat 5 --verify none -b $b --heads 16 --seqlen-q $s --seqlen-k $s --head-dim 128 >>"$out/$file" 2>&1
    log "trace $s rc=$?"
    echo "== ${TRACE_CLI:-cli} d128 non-causal $s (b $b)" >>"$out/$file"
    python3 "bench/$reader" "$bld/trace_$s.bin" "$@" >>"$out/$file" 2>&1
  done
}

# ncu_table ROWS BUILDS FILE [METRICS]: bench/ncu_grid_target.py's launches (one per row and build) under ncu, clocks
# locked, each kernel's METRICS (default: duration, DRAM and L2 bytes) appended to $out/FILE.
ncu_table() {
  local metrics=${4:-gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum}
  PYTHONPATH=$bld/pyroot:bench timeout 120 ncu --metrics "$metrics" --profile-from-start off --csv --page raw \
    python3 bench/ncu_grid_target.py --rows "$1" --builds "$2" >"$bld/ncu.csv" 2>"$bld/ncu_err.txt"
  log "ncu rc=$? $(tail -1 "$bld/ncu_err.txt")"
  python3 - "$bld/ncu.csv" "$metrics" "$1" "$2" >>"$out/$3" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
idx = {h: j for j, h in enumerate(rows[0])}
print(f"ncu: rows {sys.argv[3]} x builds {sys.argv[4]} (one launch each, in launch order)")
for r in rows[2:]:
    vals = " ".join(f"{m.split('__')[1].split('.')[0]}={r[idx[m]]}" for m in sys.argv[2].split(","))
    print(f"  {r[idx['Kernel Name']][:40]:40s} {vals}")
PY
}

# sustained_summary BASE NAME...: the sustained (stints) table of bench/integration/ab_summary.py over $out/ab.jsonl,
# into the summary.
sustained_summary() {
  python3 bench/integration/ab_summary.py "$out/ab.jsonl" "$@" | sed -n '/^sustained/,$p' | tee -a "$out/summary.txt"
}

# paired_summary BASE NAME...: the paired table of bench/integration/ab_summary.py over $out/ab.jsonl, into the
# summary.
paired_summary() {
  python3 bench/integration/ab_summary.py "$out/ab.jsonl" "$@" | sed -n '/^paired/,$p' | tee -a "$out/summary.txt"
}

# cli_summary: cli_runs' PASS / FAIL lines into the summary; the full output is dropped.
cli_summary() {
  grep -E "PASS|FAIL" "$out/cli.txt" | head -20 >>"$out/summary.txt"
  rm -f "$out/cli.txt"
}

# cli_runs ARGS...: float64-checked runs of test_cli_build's CLI on cuda_sm90, one per argument (each a string of
# `flashattn run` options), appended to $out/cli.txt with one summary line each.
cli_runs() {
  local cli=$bld/tests/tools/cli/flashattn args
  for args in "$@"; do
    # shellcheck disable=SC2086  # each argument is a list of options
    timeout 90 "$cli" run --backend cuda_sm90 --repeat 2 --verify sample $args >>"$out/cli.txt" 2>&1
    log "cli [$args] rc=$?"
  done
}


# cli_or_stop ARGS [LIMIT]: one float64-checked run of test_cli_build's CLI (ARGS: `flashattn run` options) with a
# short limit (default 40 s), first thing after the builds of a change that could hang a kernel: fails (after
# copying the run's last lines into the summary) if the run did not pass in time, so that the calling script can
# stop there (`cli_or_stop ... || exit 1`) instead of spending its device time on timeouts (session 28, s28_oov.sh).
cli_or_stop() {
  # shellcheck disable=SC2086  # ARGS is a list of options
  timeout "${2:-40}" "$bld/tests/tools/cli/flashattn" run --backend cuda_sm90 --repeat 2 --verify sample $1 \
    >>"$out/cli.txt" 2>&1
  local rc=$?
  log "cli [$1] rc=$rc"
  [[ $rc -eq 0 ]] && return 0
  tail -5 "$out/cli.txt" >>"$out/summary.txt"
  return 1
}

# final_call TAG [RUN...]: a session's last device call (final16.sh's steps): final10a.sh's verification (the full
# build with the sm80 gencode, GPU suites, sanitizers, PTX-JIT backward, float64-checked CLI runs: final10a's list,
# bench/integration/final14a_runs.txt's and the RUN arguments, each a string of `flashattn run` options) on this
# tree, the Python extension (d64 / d128 / d256) built beside it from a copy, then bench/compare.py's grid + decode
# (the standing) into $OUT/compare. TAG names the work folders (/tmp/TAG-out, ...; final10a's: g plus TAG after
# its first letter).
final_call() {
  local tag=$1
  shift
  cp src/cuda/CMakeLists.txt "/tmp/$tag-cmakelists" # device_call_begin drops the sm80 gencode; final10a.sh needs it
  device_call_begin "$tag"
  tree_copy "$bld/py-tree"
  cp "/tmp/$tag-cmakelists" src/cuda/CMakeLists.txt
  (cd "$bld/py-tree" && PY_DIMS="64;128;256" sm90_build_py new "" 6 400) &
  printf '%s\n' "$@" | cat bench/integration/final14a_runs.txt - >"/tmp/$tag-runs.txt"
  trap - EXIT
  FINAL_NAME="g${tag#?}" EXTRA_RUNS="/tmp/$tag-runs.txt" bash bench/integration/final10a.sh
  wait
  cp "$out/summary.txt" "$OUT/py_summary.txt"
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 300 python3 bench/compare.py --modes fwd --rounds 4 \
    --out "$OUT/compare" --tag "$(date +%Y%m%d-%H%M%S)-fwd" >"$OUT/compare_fwd.log" 2>&1
  echo "== compare fwd rc=$?" >>"$OUT/summary.txt"
  sed -n '/^# /,$p' "$OUT/compare_fwd.log"
}

# gpu_check_call WORK: scripts/gpu_check.sh's build, tests, python and compare steps (the full build, the ctest
# sm90_wgmma_pipelines, every GPU suite, pytest on the GPU, one forward grid of two rounds; GPU_CHECK_STEPS
# chooses others, e.g. without compare) with WORK as its output
# folder, under a 580 s limit; into $OUT: summary.txt, the suites' failure and drawn-case lines
# (gpu_test_failures.txt), the grid (compare.tgz). A session's verification of its final tree (final34.sh,
# final35.sh); it needs no device_call_begin.
gpu_check_call() {
  local work=$1
  export PATH=$PATH:/usr/local/cuda/bin
  rm -rf "$work" && mkdir -p "$work"
  OUT=$work FLASHATTN_GPU_STEPS="${GPU_CHECK_STEPS:-build tests python compare}" \
    FLASHATTN_COMPARE_ARGS="--modes fwd --rounds 2" \
    timeout 580 scripts/gpu_check.sh >"$work/all.txt" 2>&1
  echo "== gpu_check rc=$?" >>"$work/summary.txt"
  cp "$work/summary.txt" "${OUT:-/tmp}/summary.txt"
  grep -E "FAILED|Failure|drawn case" "$work/gpu_tests.log" | head -40 >"${OUT:-/tmp}/gpu_test_failures.txt"
  (cd "$work" && tar -czf "${OUT:-/tmp}/compare.tgz" compare compare.log 2>/dev/null)
  cat "$work/summary.txt"
}

# gpu_check_sanitizers WORK FILTER LIMIT TOOL...: after gpu_check_call WORK, compute-sanitizer's TOOLs on the cases
# FILTER of its test binary (LIMIT seconds each): per tool the summary line, the cases' counts, the last case run and
# the first reports, in $OUT/summary.txt (final46.sh, final47.sh).
gpu_check_sanitizers() {
  local work=$1 filter=$2 limit=$3 tool start
  shift 3
  for tool in "$@"; do
    start=$(date +%s)
    timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 3 build/gpu/tests/flashattn_tests \
      --gtest_filter="$filter" --gtest_brief=0 >"$work/$tool.log" 2>&1
    echo "== $tool rc=$? in $(($(date +%s) - start)) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$work/$tool.log")" |
      tee -a "${OUT:-/tmp}/summary.txt"
    grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$work/$tool.log" | sort | uniq -c | tee -a "${OUT:-/tmp}/summary.txt"
    grep -E '^\[ RUN|^\[       OK' "$work/$tool.log" | tail -2 | cut -c1-160 | tee -a "${OUT:-/tmp}/summary.txt"
    grep -E -m2 -A6 '^========= (Invalid|Misaligned|Error|Race|Barrier)' "$work/$tool.log" | cut -c1-200 >>"${OUT:-/tmp}/summary.txt"
  done
}

# grid_call NAME: a standing's further grid of this tree: the Python extension (d 64 / 128 / 256, bf16) and
# bench/compare.py's forward grid and decode row, two rounds, into $OUT (grid.tgz, summary.txt).
grid_call() {
  device_call_begin "$1"
  PY_DIMS="64;128;256" sm90_build_py new "" 16 300
  rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
  compare_grid 2 200
  (cd "$out" && tar -czf "${OUT:-/tmp}/grid.tgz" compare-*)
  log total
}

# decode_cache_checks SANITIZED: session 49's checks after a build of the tree's test binary and extension beside a base
# extension (tree_and_flag_base, or a patch-reversed tree): the decode kernels' SASS counts, the KV-cache / split-KV /
# workspace / cuda_sm90 suites, memcheck / racecheck on the cases SANITIZED, synccheck on the narrow tile's KV-cache
# cases, and bench/integration/s49_cache_lengths.py's rows (base against new) into $out/cache.jsonl.
decode_cache_checks() {
  local narrow='Grid/KVCacheTest.*cuda_sm90_*_2x1500_*:Grid/KVCacheTest.*cuda_sm90_*_1x3000_*'
  narrow+=':Grid/KVCacheTest.*cuda_sm90_*_1x2900_*:Grid/KVCacheTest.*cuda_sm90_*_1x1300_*'
  narrow+=':Grid/KVCacheTest.*cuda_sm90_*_1x1200_*:Grid/KVCacheTest.*cuda_sm90_*_2x900_*'
  sm90_sass_counts "$bld/full" | grep -E "Li1ELi0ELi1ELb0" | tee -a "$out/summary.txt"
  gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*CudaSm90*' 200
  sanitizer_runs "$tests" "$1" 150 memcheck racecheck
  sanitizer_runs "$tests" "$narrow" 100 synccheck
  (cd bench/integration && PYTHONPATH=$bld/pyroot timeout 200 python3 s49_cache_lengths.py base new) 2>&1 |
    grep -v Warning >"$out/cache.jsonl"
  log "cache lengths A/B rc=$?"
  ab_summary "$out/cache.jsonl"
}

# patch_ab_builds PATCH: the test binary and extension of this tree (d 64 / 128 / 256, both dtypes; tests_and_py_build:
# sets tests) beside the base extension, the tree with PATCH reversed (package flashattn_base), built in parallel.
patch_ab_builds() {
  tree_copy "$bld/base-tree" "$1" -R
  (cd "$bld/base-tree" && PY_DIMS="64;128;256" sm90_build_py base "" 5 300) &
  tests_and_py_build "64;128;256"
  wait
}

# rows_ab SCRIPT NAME [BUILDS...]: bench/integration/SCRIPT's rows over the packages BUILDS under $bld/pyroot (default
# base against new), into $out/NAME.jsonl, their medians and SDPA rows in the summary; ROWS_LIMIT seconds (200).
rows_ab() {
  local script=$1 name=$2
  shift 2
  (($#)) || set -- base new
  (cd bench/integration && PYTHONPATH=$bld/pyroot timeout "${ROWS_LIMIT:-200}" python3 "$script" "$@") 2>&1 |
    grep -v Warning >"$out/$name.jsonl"
  log "$name A/B rc=$?"
  ab_summary "$out/$name.jsonl"
}

# decode_change_checks: a decode change's checks on $tests (sessions 51-52): the KV-cache / split-KV / workspace /
# cuda_sm90 forward and varlen suites, synccheck on the cluster-combine cases, memcheck / racecheck on every KV-cache
# case of cuda_sm90 (grid and drawn), pytest's interface and dispatch files on the GPU.
decode_change_checks() {
  local clusters='Grid/KVCacheTest.*cuda_sm90_*splits24*:Grid/KVCacheTest.*cuda_sm90_*1x40000*'
  clusters+=':Grid/KVCacheTest.*cuda_sm90_*splits20*:Grid/KVCacheTest.*cuda_sm90_*1x2500_b1_mqa8_d256*'
  clusters+=':Grid/KVCacheTest.*cuda_sm90_*1x4000_*:Grid/KVCacheTest.*cuda_sm90_*gqa12x2_d256*'
  gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*CudaSm90*:*Varlen*cuda_sm90*:*Forward*cuda_sm90*' 220
  sanitizer_runs "$tests" "$clusters" 100 synccheck
  sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90*:Random/KVCacheRandomTest.*cuda_sm90*' 150 memcheck racecheck
  py_tests_on_gpu test_interface.py test_dispatch.py
}

# decode_trace_briefs RUN...: after decode_trace_build, each RUN (keys:batch:d) through $bld/trace as a GQA 32/8
# KV-cache call and the patched tree's reader's whole-call view (--brief: the span and the events' medians).
decode_trace_briefs() {
  local run keys batch d
  for run in "$@"; do
    IFS=: read -r keys batch d <<<"$run"
    {
      echo "== brief d$d keys $keys batch $batch"
      timeout 60 "$bld/trace" "$keys" "$batch" kvcache "$bld/trace.bin" "$d" 0 32 8
      timeout 60 python3 "$bld/trace-tree/bench/decode_trace.py" "$bld/trace.bin" --brief
    } >>"$out/summary.txt" 2>&1
  done
}

# first_cases FILTER LIMIT: the test binary's cases FILTER alone under LIMIT seconds before anything else of a call
# (a kernel that hangs stops the call here); their counts and first failures in the summary; fails with them.
first_cases() {
  timeout "$2" "$tests" --gtest_filter="$1" --gtest_brief=1 >"$out/first.log" 2>&1
  local rc=$?
  log "first cases rc=$rc $(grep -E '^\[  (PASSED|SKIPPED|FAILED)' "$out/first.log" | tr '\n' ' ')"
  grep -E 'FAILED  \]|Failure' "$out/first.log" | cut -c1-200 | head -20 | tee -a "$out/summary.txt"
  return $rc
}

# backward_sm90_first_cases LIMIT: first_cases over cuda_sm90's backward grid, drawn and determinism cases (of the
# head dims built), the CUDA setup's first check in the backward A/B calls; stops the call on a failure.
backward_sm90_first_cases() {
  first_cases 'Grid/BackwardTest.*cuda_sm90_*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*' \
    "$1" || exit 1
}

# decode_trace_runs RUN...: after decode_trace_build, each RUN (keys:batch:d:splits:q heads:kv heads) through $bld/trace
# and the patched tree's reader (two CTAs' events), into the summary.
decode_trace_runs() {
  local run keys batch d splits hq hk
  for run in "$@"; do
    IFS=: read -r keys batch d splits hq hk <<<"$run"
    {
      echo "== d$d keys $keys batch $batch splits $splits heads $hq/$hk"
      timeout 60 "$bld/trace" "$keys" "$batch" kvcache "$bld/trace.bin" "$d" "$splits" "$hq" "$hk"
      timeout 60 python3 "$bld/trace-tree/bench/decode_trace.py" "$bld/trace.bin" --ctas 2
    } >>"$out/summary.txt" 2>&1
    log "run $run"
  done
}

# ncu_backward_times DIMS SEQLENS: each kernel of one backward call per row (bench/backward_kernel_times.py, its
# rows at head dims DIMS and lengths SEQLENS, causal and not), timed by ncu without clock control; the times per
# row in the summary (times.csv in $out).
ncu_backward_times() {
  (cd /tmp && PYTHONPATH=$bld/pyroot timeout 120 ncu --clock-control none --nvtx --nvtx-include "regex:bwd_.*/" \
    --metrics gpu__time_duration.sum --csv python3 "$OLDPWD/bench/backward_kernel_times.py" --hdims "$1" \
    --seqlens "$2" >"$out/times.csv" 2>"$out/ncu.err")
  log "ncu rc=$? $(tail -1 "$out/ncu.err" | cut -c1-200)"
  python3 - "$out/times.csv" >>"$out/summary.txt" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]
kname, val, unit = head.index("Kernel Name"), head.index("Metric Value"), head.index("Metric Unit")
total = collections.OrderedDict()
for r in rows[1:]:
    # (The NVTX range's column is not named alike by every ncu: the first cell naming a bwd_ range.)
    tag = next((cell for cell in r if "bwd_" in cell), "?")
    total.setdefault(tag, []).append((r[kname][:40], r[val], r[unit]))
for tag, ks in total.items():
    print(tag, "  ".join(f"{n}: {v} {u}" for n, v, u in ks))
PY
}

# backward_trace_rows: bench/integration/s64_trace_driver.py's rows through the package flashattn_trace (a build of
# the tree with a backward trace patch, s64_bwd_trace*.patch), each row's third call read by bench/backward_trace.py
# into $out/trace_summary.txt (also copied to $OUT).
backward_trace_rows() {
  local files=() i
  mkdir -p "$out/trace"
  (PYTHONPATH=$bld/pyroot FLASHATTN_PACKAGE=flashattn_trace FLASHATTN_BWD_TRACE=$out/trace/t timeout 120 \
    python3 bench/integration/s64_trace_driver.py >"$out/trace_driver.txt" 2>&1)
  log "trace driver rc=$? $(tail -2 "$out/trace_driver.txt" | tr '\n' ' ' | cut -c1-200)"
  for i in 2 5 8 11 14 17 20 23; do files+=("$out/trace/t.$i"); done
  python3 bench/backward_trace.py "${files[@]}" >"$out/trace_summary.txt" 2>&1
  log "trace summary rc=$?"
  cp "$out/trace_summary.txt" "$out/trace_driver.txt" "${OUT:-/tmp}/" 2>/dev/null
}

# backward_switch_call NAME TRACE_PATCH TREE_FLAGS BASE_FLAGS: a backward switch's call at d64 / d128: the tree built
# with CUDA flags TREE_FLAGS (the tests run on it) beside the package flashattn_base built with BASE_FLAGS, a trace
# build (TRACE_PATCH on a copy of the tree, TREE_FLAGS), the cuda_sm90 first cases, the A/B over 512-16k tokens
# ($out/NAME.jsonl), the trace rows, the backward suites, synccheck and racecheck.
backward_switch_call() {
  local name=$1 trace_patch=$2 tree_flags=$3 base_flags=$4
  tree_copy "$bld/trace-tree" "$trace_patch" || exit 1
  (cd "$bld/trace-tree" && PY_DIMS="64;128" sm90_build_py trace "$tree_flags" 3 400 -DFLASHATTN_BACKWARD=ON) &
  TREE_CUDA_FLAGS="$tree_flags" tree_and_flag_base "64;128" "$base_flags" -DFLASHATTN_BACKWARD=ON
  wait
  backward_sm90_first_cases 150
  backward_compare_vs_base "$name" 200 --hdims 64,128 --seqlens 512,1024,2048,4096,16384 --rounds 2 \
    --settle-ms 100 --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
  backward_trace_rows
  gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 200
  sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*:-*dropout*:*2048x2048*' 100 synccheck racecheck
}

# split_column_call PATCH NAME CUDA_FLAGS: session 66's checks of the d >= 192 Hopper backward. Builds in parallel this
# tree's tests and extension (head dims 64-256), the tree with PATCH reversed as flashattn_base (d = 256) and this
# tree with CUDA_FLAGS as flashattn_NAME (d = 192); then every CUDA backward suite, synccheck and racecheck
# over the d192 / d256 grid cases, memcheck over d192's, and d256 against the base (rows in d256.jsonl).
split_column_call() {
  local patch=$1 name=$2 cuda_flags=$3
  tree_copy "$bld/base-tree" "$patch" -R || return 1
  (cd "$bld/base-tree" && PY_DIMS="256" sm90_build_py base "" 4 400 -DFLASHATTN_BACKWARD=ON) &
  (PY_DIMS="192" sm90_build_py "$name" "$cuda_flags" 4 400 -DFLASHATTN_BACKWARD=ON) &
  tests_and_py_build "64;128;192;256"
  wait
  gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 240
  sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d192_*:Grid/BackwardTest.*cuda_sm90_*_d256_*' 150 \
    synccheck racecheck
  sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d192_*' 100 memcheck
  backward_compare_vs_base d256 120 --hdims 256 --seqlens 1024,4096,16384 --rounds 2 --settle-ms 100 \
    --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
}

# drawn_fuzz SECONDS: the drawn suites (Random/*: forward, varlen, KV-cache and backward cases drawn afresh from each
# run's FLASHATTN_TEST_SEED, tests/support/attention_cases.cpp) of both CUDA backends of the test binary $tests, run
# by four workers again and again with a new seed until SECONDS are up; every failing run's log and seed kept in
# $OUT, the runs' list in $OUT/runs.txt, their counts in the summary.
drawn_fuzz() {
  local start end
  start=$(date +%s)
  end=$((start + $1))
  fuzz_worker() {
    local w=$1 i=0 seed rc
    while (($(date +%s) + 60 < end)); do
      seed=$(((start << 8) + (w << 20) + i))
      i=$((i + 1))
      FLASHATTN_TEST_SEED=$seed OMP_NUM_THREADS=4 timeout 150 "$tests" --gtest_filter='Random/*cuda*' \
        --gtest_brief=1 >"$out/run_$seed.log" 2>&1
      rc=$?
      echo "$seed rc=$rc $(grep -E '^\[  PASSED' "$out/run_$seed.log" | tr -s ' ')" >>"$out/runs_$w.txt"
      if ((rc == 0)); then rm -f "$out/run_$seed.log"; else cp "$out/run_$seed.log" "${OUT:-/tmp}/"; fi
    done
  }
  for w in 0 1 2 3; do fuzz_worker "$w" & done
  wait
  cat "$out"/runs_*.txt >"$out/runs.txt"
  cp "$out/runs.txt" "${OUT:-/tmp}/"
  log "runs $(wc -l <"$out/runs.txt"), failed $(grep -vc 'rc=0' "$out/runs.txt"), cases passed $(awk '{s += $6} END {print s}' "$out/runs.txt")"
  grep -h -E 'FAILED  \]|drawn case' "${OUT:-/tmp}"/run_*.log 2>/dev/null | sort | uniq | head -40 >>"$out/summary.txt"
}
