#!/usr/bin/env bash
# Session 7, helper sm90p (issue 6): cuda_sm90 paged K/V as TMA boxes of 8-128 rows, before/after in one
# device call. Run from the folder that holds the two trees:
#   new/  branch sm90p (this script's tree)      base/  main 4414e63 (before)
#   cd .device-carry/sm90p/new && DEADLINE=255 timeout 270 bash bench/sm90p_run.sh
# Steps:
#  1. two builds in parallel (90a, no backward, d 64/128/256; the sm80 family as sm_90 SASS only: the sm_80
#     SASS and compute_80 PTX gencodes are dropped from the carried copies' CMakeLists, which changes nothing
#     that runs on an H200): A = base CLI (fp16), N = new CLI + tests (fp16 + bf16);
#  2. `flashattn run --dtype fp16 --repeat 20 --verify none`: cuda_sm90 of A, of N ("B"), of A again
#     (control, d128 s8192 rows), and cuda_sm80 of N ("S"), interleaved per cell; the issue's rows first;
#  3. correctness at once: the KV-cache and varlen suites on both CUDA backends, racecheck and synccheck on
#     small paged cuda_sm90 cases (8-row boxes; a leftpad that mixes TMA boxes and gathers), and
#     `--verify full` (float64 reference) with N's cuda_sm90, pages 8/16/48/64/192/256 at d 64/128/256;
#  4. more timing rows while time is left.
set -uo pipefail
here=$PWD
base=$here/../base
out=/tmp/sm90p-out
bld=/tmp/sm90p-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld"
trap 'tar -C /tmp -czf "${OUT:-/tmp}/sm90p-out.tgz" sm90p-out' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
elapsed() { echo $(($(date +%s) - t0)); }
stamp() { echo "== [$(elapsed) s] $*" | tee -a "$out/run.txt"; }
# budget CAP [RESERVE]: seconds a step may take, at most CAP, leaving RESERVE before DEADLINE (0: skip).
budget() {
  local left=$((${DEADLINE:-255} - $(elapsed) - ${2:-0}))
  ((left > $1)) && left=$1
  ((left < 8)) && left=0
  echo "$left"
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw \
  --format=csv,noheader >>"$out/run.txt" 2>&1
for tree in "$here" "$base"; do
  sed -i 's/^set(FLASHATTN_SM80_GENCODE -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80)/set(FLASHATTN_SM80_GENCODE)/' \
    "$tree/src/cuda/CMakeLists.txt"
done
grep -c "set(FLASHATTN_SM80_GENCODE)" "$here/src/cuda/CMakeLists.txt" "$base/src/cuda/CMakeLists.txt" >>"$out/run.txt"
common=(-G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF
  -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_PTXAS_VERBOSE=ON
  -DFLASHATTN_HEAD_DIMS="64;128;256")
# shellcheck disable=SC2086  # TARGET may name several targets
build() { # NAME SOURCE TARGET LIMIT NICE cmake-args...
  local name=$1 src=$2 target=$3 limit=$4 niceness=$5
  shift 5
  cmake -S "$src" -B "$bld/$name" "${common[@]}" "$@" >"$out/${name}_configure.log" 2>&1 &&
    nice -n "$niceness" timeout "$limit" cmake --build "$bld/$name" --target $target -j 16 >"$out/${name}_build.log" 2>&1
  local rc=$?
  stamp "build $name rc=$rc"
  grep -E "Compiling entry|spill" "$out/${name}_build.log" | grep -A1 "cuda_sm90.*forward_kernel" |
    sed 's/.*ForwardConfigILi//' >"$out/${name}_sm90_ptxas.txt"
  return $rc
}
cli_args=(-DFLASHATTN_DTYPES=fp16 -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_CLI=ON)
# N builds the CLI and the tests from one library (fp16 + bf16): no kernel is compiled twice.
build N "$here" "flashattn_cli flashattn_tests" 175 0 -DFLASHATTN_DTYPES="fp16;bf16" -DFLASHATTN_BUILD_TESTS=ON \
  -DFLASHATTN_BUILD_CLI=ON &
build_n=$!
build A "$base" flashattn_cli 175 0 "${cli_args[@]}" &
build_a=$!
wait $build_n
wait $build_a
cli_a=$bld/A/tools/cli/flashattn
cli_b=$bld/N/tools/cli/flashattn
tests=$bld/N/tests/flashattn_tests
stamp "builds done"

# cell LABEL PAGE COLUMNS ARGS...: one line per column, "label page column time". Columns: A (base sm90),
# B (new sm90), A2 (base sm90 again: the control), S (cuda_sm80 of B).
cell() {
  local label=$1 page=$2 columns=$3
  shift 3
  (($(elapsed) < ${cell_deadline:-150})) || {
    echo "$label $page skipped (time)" | tee -a "$out/timing.txt"
    return
  }
  local paged=()
  [[ $page != dense ]] && paged=(--paged "$page")
  local column cli backend line
  for column in $columns; do
    cli=$cli_a backend=cuda_sm90
    [[ $column == B ]] && cli=$cli_b
    [[ $column == S ]] && cli=$cli_b backend=cuda_sm80
    [[ -x $cli ]] || continue
    line=$(timeout 30 "$cli" run --backend $backend --dtype fp16 --repeat 20 --verify none "$@" "${paged[@]}" \
      2>&1 | tee -a "$out/timing_raw.txt" | grep -E "^kernel|^time|not run|rror" | head -2 | tr -s ' \n' ' ')
    echo "$label $page $column ${line:-FAILED}" | tee -a "$out/timing.txt"
  done
}
d128=(--head-dim 128 --seqlen-q 8192 --batch 1 --heads 4)
big128=(--head-dim 128 --seqlen-q 4096 --batch 4 --heads 16)
decode=(--head-dim 128 --seqlen-q 1 --seqlen-k 8000 --batch 64 --heads 32 --heads-kv 8)
# Core rows (the issue's table), leaving 75 s for the correctness block.
cell_deadline=$((${DEADLINE:-255} - 75))
for page in dense 16 64 192 256; do cell d128_s8192_b1_h4 "$page" "A B A2 S" "${d128[@]}"; done
for page in dense 16 192; do cell d128_s4096_b4_h16 "$page" "A B S" "${big128[@]}"; done
for page in 128 192; do cell d64_s8192_b1_h4 "$page" "A B" --head-dim 64 --seqlen-q 8192 --batch 1 --heads 4; done
cell d256_s8192_b1_h4 256 "A B S" --head-dim 256 --seqlen-q 8192 --batch 1 --heads 4
# Decoding over a paged cache of 8000 keys (the last key block of every tile ends inside a box).
cell d128_decode_b64_h32_kv8_sk8000 16 "A B S" "${decode[@]}"
stamp "core timing done"

# Correctness, all at once (nothing timed meanwhile): the suites, racecheck, synccheck and the float64-checked
# CLI runs share the GPU.
if [[ -x $tests ]]; then
  filter='*KVCacheTest*cuda_sm*:*VarlenTest*cuda_sm*'
  "$tests" --gtest_filter="$filter" --gtest_list_tests >"$out/tests_list.txt" 2>&1
  grep -E "_page[0-9]+" "$out/tests_list.txt" | sed -E 's/.*(cuda_sm[89]0)_.*_(page[0-9]+).*/\1 \2/' | sort |
    uniq -c >"$out/paged_counts.txt"
  left=$(budget 75 12)
  ((left > 0)) || left=1
  (timeout "$left" "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$out/tests.txt" 2>&1
    echo "rc=$?" >>"$out/tests.txt") &
  sanitize='*KVCacheTest*cuda_sm90*_page192_leftpad*:*VarlenTest*cuda_sm90*_page8_*'
  for tool in racecheck synccheck; do
    (timeout "$left" compute-sanitizer --tool $tool --error-exitcode 3 "$tests" --gtest_filter="$sanitize" \
      --gtest_brief=1 >"$out/$tool.txt" 2>&1
      echo "rc=$?" >>"$out/$tool.txt") &
  done
fi
verify_deadline=$((${DEADLINE:-255} - 15))
for page in 16 48 64 192 256 8; do
  for d in 64 128 256; do
    (($(elapsed) < verify_deadline)) || continue
    timeout 20 "$cli_b" run --backend cuda_sm90 --dtype fp16 --head-dim $d --seqlen-q 400 --batch 3 --heads 4 \
      --heads-kv 2 --varlen --paged $page --verify full --repeat 1 >>"$out/verify.txt" 2>&1
    echo "verify d$d page $page rc=$?" >>"$out/verify_summary.txt"
  done
done
for page in 48 192; do
  (($(elapsed) < verify_deadline)) || continue
  timeout 20 "$cli_b" run --backend cuda_sm90 --dtype bf16 --head-dim 128 --seqlen-q 200 --seqlen-k 1500 \
    --batch 2 --heads 8 --heads-kv 2 --causal --paged $page --verify full --repeat 1 >>"$out/verify.txt" 2>&1
  echo "verify causal bf16 d128 sq200 sk1500 page $page rc=$?" >>"$out/verify_summary.txt"
done
stamp "verify: $(grep -c PASS "$out/verify.txt") PASS, $(grep -c FAIL "$out/verify.txt") FAIL, \
$(grep -c 'rc=0' "$out/verify_summary.txt") rc=0 of $(grep -c 'rc=' "$out/verify_summary.txt")"
wait
stamp "tests $(tail -5 "$out/tests.txt" | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" "$out/tests.txt" | head -20 | tee -a "$out/run.txt"
for tool in racecheck synccheck; do
  stamp "$tool $(grep -m1 'SUMMARY' "$out/$tool.txt") $(grep -cE '^\[ +OK' "$out/$tool.txt") ok, $(tail -1 "$out/$tool.txt")"
done

# More rows while time is left.
cell_deadline=$((${DEADLINE:-255} - 6))
for page in 48 128; do cell d128_s8192_b1_h4 "$page" "A B S" "${d128[@]}"; done
for page in 64 256; do cell d128_s4096_b4_h16 "$page" "A B S" "${big128[@]}"; done
cell d64_s8192_b1_h4 dense "A B" --head-dim 64 --seqlen-q 8192 --batch 1 --heads 4
for page in 128 192; do cell d64_s4096_b4_h16 "$page" "A B" --head-dim 64 --seqlen-q 4096 --batch 4 --heads 16; done
cell d256_s8192_b1_h4 64 "A B S" --head-dim 256 --seqlen-q 8192 --batch 1 --heads 4
cell d128_decode_b64_h32_kv8_sk8000 256 "A B S" "${decode[@]}"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1
stamp "done"
