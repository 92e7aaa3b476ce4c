#!/usr/bin/env bash
# One device call of the sm90h work (session 5: fewer instructions per score at d 64, issue 6).
# Run from this tree's root, carried inside the main checkout:
#   cd .device-carry/sm90h && bash bench/sm90h_run.sh [sm90_ab.py args, default --hdims 64]
# Every build comes from THIS tree and differs only by compile flags: Python extensions (90a,
# bf16, d PY_DIMS, default 64) base (BASE_FLAGS, default $off: both switches off everywhere,
# the kernels before this work; today's default has them on in the three-consumer kernel), new
# (NEW_FLAGS, default both switches below), var (VAR_FLAGS, default the tile mask range only)
# and var2 (VAR2_FLAGS, default the row sums only; "none" skips it); beside them one test/CLI
# build (TEST_DIMS, fp16 + bf16, TEST_FLAGS = NEW_FLAGS, ptxas -v). The switches
# (forward_config.h), each for the two-consumer kernels and (_THREE) the three-consumer ones:
#   FLASHATTN_SM90_ROW_SUM_MMA{,_THREE}      row sums on the tensor cores (dv = 64 kernels)
#   FLASHATTN_SM90_TILE_MASK_RANGE{,_THREE}  the mask decision once per tile
# The flag sets below spell all four out. The two runs of 2026-11-22 (docs/performance-sm90.md,
# "Session 5, helper sm90h") ran before the _THREE switches existed, with "=1" meaning every
# kernel and no flag meaning off everywhere (their base), i.e. today's $rowsum, $both, $off:
#   run 1: NEW_FLAGS="$rowsum" VAR_FLAGS="$off" VAR2_FLAGS=none bash bench/sm90h_run.sh --hdims 64
#   run 2: PY_DIMS="64;128" bash bench/sm90h_run.sh --hdims 64,128
# Steps, each under its own timeout: the sm90 suites; CLI sampled float64 checks at long d 64
# sequences (the three-consumer kernel); SASS of the d 64 objects of base and new (cuobjdump,
# kept whole) and per-kernel opcode counts; ncu of base and new at d 64, 2048 and 8192 keys
# (SourceCounters, WarpStateStats, InstructionStats, SchedulerStats; the source page with SASS
# exported as CSV; NCU=0 skips); bench/sm90_ab.py (base, new, var, var2, cuDNN in one process);
# racecheck + synccheck of the test build on SAN_FILTER with the time left (SAN=0 skips).
# Everything returned lands in one tar under $OUT.
set -uo pipefail
out=/tmp/sm90h-out
bld=/tmp/sm90h-build
rm -rf "$out" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90h-out.tgz" sm90h-out; }
trap finish EXIT
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv |
  tee "$out/gpu.txt"
cp COMMIT "$out/commit.txt" 2>/dev/null
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh

flags() {  # row sums (two, three consumers), mask range (two, three)
  echo "-DFLASHATTN_SM90_ROW_SUM_MMA=$1 -DFLASHATTN_SM90_ROW_SUM_MMA_THREE=$2" \
    "-DFLASHATTN_SM90_TILE_MASK_RANGE=$3 -DFLASHATTN_SM90_TILE_MASK_RANGE_THREE=$4"
}
off=$(flags 0 0 0 0)
rowsum=$(flags 1 1 0 0)
maskrange=$(flags 0 0 1 1)
both=$(flags 1 1 1 1)
NEW_FLAGS=${NEW_FLAGS-$both}
BASE_FLAGS=${BASE_FLAGS-$off}
VAR_FLAGS=${VAR_FLAGS-$maskrange}
VAR2_FLAGS=${VAR2_FLAGS-$rowsum}
build_py() { PY_DIMS=${PY_DIMS:-64} sm90_build_py "$1" "$2" 4 200 -DFLASHATTN_PTXAS_VERBOSE=ON; }
rm -rf "$bld/pyroot"
pids=()
build_py base "$BASE_FLAGS" & pids+=($!)
build_py new "$NEW_FLAGS" & pids+=($!)
build_py var "$VAR_FLAGS" & pids+=($!)
[[ $VAR2_FLAGS != none ]] && { build_py var2 "$VAR2_FLAGS" & pids+=($!); }

ptxas_table() {  # build log -> one line per sm90 forward kernel: registers and spills
  grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$1" | grep -E "entry|spill" |
    sed -E 's/.*ForwardConfigILi([0-9]+)ELi([0-9]+)E(13__nv_bfloat16|6__half)Li([0-9])ELi([0-9]+)EEELb([01]).*/kernel d\1 dv\2 \3 consumers \4 long_n \5 paged \6/' |
    paste - -
}

# Opcode histogram (first word of the opcode, predicate stripped) per sm90 forward kernel.
sass_opcodes() {
  awk '
    /Function : .*forward_kernel/ {name = $3; next}
    /Function :/ {name = ""}
    name == "" {next}
    /^[ \t]*\/\*[0-9a-f]+\*\// {
      line = $0; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line); sub(/^@!?U?P[0-9T] /, "", line)
      split(line, w, /[ ;]/); op = w[1]; if (op == "") next
      c[name " " op]++
    }
    END {for (k in c) print k, c[k]}' | sort
}

build_tests() {
  local name=$1 dims=$2 flags=$3 jobs=$4
  cmake -S . -B "$bld/$name" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS="$dims" -DFLASHATTN_DTYPES="fp16;bf16" \
    -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=ON -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
    -DFLASHATTN_PTXAS_VERBOSE=ON -DCMAKE_CUDA_FLAGS="$flags" >"$out/${name}_configure.log" 2>&1
  timeout 220 cmake --build "$bld/$name" -j "$jobs" --target flashattn_tests flashattn_cli >"$out/${name}_build.log" 2>&1
  local rc=$?
  log "test build $name (dims $dims; $flags) rc=$rc"
  ptxas_table "$out/${name}_build.log" >"$out/${name}_ptxas.txt"
  return $rc
}

# racecheck + synccheck of build NAME on SAN_FILTER, each within what is left of SAN_BUDGET
# seconds after the start (default 280), skipped when under 30 s are left.
sanitize() {
  local name=$1 tests=$bld/$1/tests/flashattn_tests start tool left
  local san=${SAN_FILTER:-'Grid/*cuda_sm90*_d64_*:Grid/*cuda_sm90*_113x203_*'}
  for tool in racecheck synccheck; do
    left=$((${SAN_BUDGET:-280} - ($(date +%s) - t0)))
    if ((left < 30)); then
      log "$name $tool skipped: $left s left"
      continue
    fi
    start=$(date +%s)
    timeout $((left < 90 ? left : 90)) compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" \
      --gtest_filter="$san" --gtest_brief=1 >"$out/${name}_sanitize_$tool.log" 2>&1
    log "$name $tool rc=$? in $(($(date +%s) - start)) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/${name}_sanitize_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/${name}_sanitize_$tool.log" | tr '\n' ' ')"
  done
}

check_tests() {
  local name=$1 tests=$bld/$1/tests/flashattn_tests start
  local cli=$bld/$1/tools/cli/flashattn
  start=$(date +%s)
  timeout 150 "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/${name}_tests.log" 2>&1
  log "$name sm90 suites rc=$? in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/${name}_tests.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/${name}_tests.log" | head -20 | tee -a "$out/summary.txt"
  # Long sequences through the CLI (the three-consumer kernel from 4k queries), each row checked
  # on sampled rows against float64.
  if [[ -x $cli ]]; then
    timeout 60 "$cli" bench --backend cuda_sm90 --head-dims 64 --seqlens 2048,4096,16384 --mask both \
      --verify sample --repeat 3 >>"$out/${name}_cli.txt" 2>&1
    echo "rc=$? (bench bf16)" >>"$out/${name}_cli.txt"
    for args in "--dtype fp16 --batch 2 --seqlen-q 8192" "--dtype fp16 --batch 4 --seqlen-q 8192 --varlen --causal" \
      "--dtype bf16 --batch 2 --seqlen-q 1000 --seqlen-k 9000 --window 700,300 --heads-kv 4" \
      "--dtype bf16 --batch 1 --seqlen-q 16384 --causal"; do
      # shellcheck disable=SC2086  # args is a word list
      timeout 40 "$cli" run --backend cuda_sm90 --head-dim 64 --heads 16 $args --verify sample --repeat 3 \
        >>"$out/${name}_cli.txt" 2>&1
      echo "rc=$? (run d64 $args)" >>"$out/${name}_cli.txt"
    done
    log "$name cli: $(grep -c 'PASS$' "$out/${name}_cli.txt") PASS lines, $(grep -E -c 'FAIL' "$out/${name}_cli.txt") FAIL lines, rcs: $(grep -o 'rc=[0-9]*' "$out/${name}_cli.txt" | tr '\n' ' ')"
  fi
}

build_tests gpu "${TEST_DIMS:-64;128}" "${TEST_FLAGS:-$NEW_FLAGS}" 6 && check_tests gpu
test_ok=$?

for pid in "${pids[@]}"; do wait "$pid"; done
for name in base new var var2; do
  [[ -f $out/py_${name}_build.log ]] && ptxas_table "$out/py_${name}_build.log" >"$out/py_${name}_ptxas.txt"
done
if command -v cuobjdump >/dev/null; then
  for name in base new var var2; do
    o=$bld/py-$name/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim64_bf16.cu.o
    [[ -f $o ]] || continue
    cuobjdump -sass "$o" >"$out/sass_${name}_d64.txt" 2>&1
    sass_opcodes <"$out/sass_${name}_d64.txt" >"$out/opcodes_${name}_d64.txt"
  done
  log "sass dumped: $(wc -l "$out"/sass_*_d64.txt | tail -1)"
fi
if [[ ${NCU:-1} != 0 ]] && command -v ncu >/dev/null; then
  sections="--section SpeedOfLight --section SchedulerStats --section WarpStateStats --section InstructionStats --section SourceCounters --section ComputeWorkloadAnalysis"
  # shellcheck disable=SC2086  # sections is a word list
  PYTHONPATH=$bld/pyroot timeout 100 ncu $sections --import-source no -k regex:forward_kernel --launch-count 4 \
    -o "$out/ncu_d64" python3 bench/sm90h_ncu_target.py >"$out/ncu.log" 2>&1
  log "ncu rc=$?"
  if [[ -f $out/ncu_d64.ncu-rep ]]; then
    timeout 30 ncu -i "$out/ncu_d64.ncu-rep" --page details >"$out/ncu_d64.txt" 2>&1
    timeout 40 ncu -i "$out/ncu_d64.ncu-rep" --page source --csv --print-source sass >"$out/ncu_source.csv" 2>&1 ||
      timeout 40 ncu -i "$out/ncu_d64.ncu-rep" --page source --csv >"$out/ncu_source.csv" 2>&1
    log "ncu source page rc=$? $(wc -c <"$out/ncu_source.csv") bytes"
  fi
fi
start=$(date +%s)
args=("$@")
((${#args[@]})) || args=(--hdims 64)
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "${AB_TIMEOUT:-110}" python3 bench/sm90_ab.py "${args[@]}" \
  2>&1 | grep -v Warning | tee "$out/ab.jsonl"
log "ab rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"
[[ ${SAN:-1} != 0 && $test_ok == 0 ]] && sanitize gpu
# The bulky files go back compressed inside the one tar; nothing else is needed from them.
cat "$out/summary.txt"
