#!/usr/bin/env bash
# Session 15 (issue 6), on the commit that adds this script: causal tiles in complementary couples
# (FLASHATTN_SM90_PAIRED_TILES=1, new: tile_sections.h paired). s15_l2.sh found the d256 causal rows reading their
# K/V from DRAM 4-5 times (kvh0 diagnostic: +1.3..3.4% against base with every head's K/V in L2) and d64 causal 16k
# 1.4 times (+2.4%); with equal work per claim the CTAs' couples cover about two heads at a time.
#  1. correctness: the test binary and the CLI (default flags, every sm90 head dim, both dtypes): sm90 GPU suites,
#     racecheck on causal cases, float64-checked CLI runs at long causal rows (sections of one head, GQA, sq != sk,
#     fp16, a right window);
#  2. ncu DRAM reads at d256 / d64 / d128 causal 16k, base (PAIRED_TILES=0) and new;
#  3. A/B base / new / ctrl on causal 2k / 4k / 16k (d256 also 8k), three passes beside cuDNN.
# Prediction: d256 causal DRAM 804-965 -> 250-400 MB, d256 causal +1-3%, d64 causal 16k +1-2%, d128 within noise.
#   bash bench/integration/s15_paired.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s15p
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "$out"/tests.txt "$out"/cli.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
test_cli_build "64;96;128;192;256" "fp16;bf16" 10 &
PY_DIMS="64;128;256" sm90_build_py base "-DFLASHATTN_SM90_PAIRED_TILES=0" 3 400 &
PY_DIMS="64;128;256" sm90_build_py new "" 3 400 &
wait
log "builds done: $(ls "$bld/tests/tests/flashattn_tests" "$bld/tests/tools/cli/flashattn" 2>&1 | tr '\n' ' ')"
tests=$bld/tests/tests/flashattn_tests
timeout 150 "$tests" --gtest_filter='*cuda_sm90*:*Sm90*:*TileSections*' --gtest_brief=1 >"$out/tests.txt" 2>&1
log "sm90 suites rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
timeout 90 compute-sanitizer --tool racecheck --error-exitcode 3 "$tests" \
  --gtest_filter='*cuda_sm90*causal*2048x2048*:*Sm90/ConsumerKeyRange*0_*:*Sm90/ConsumerKeyRange*1_*' --gtest_brief=1 \
  >"$out/racecheck.txt" 2>&1
log "racecheck rc=$? $(grep -m1 'SUMMARY' "$out/racecheck.txt") $(grep -c '^\[       OK' "$out/racecheck.txt") ok"
cli=$bld/tests/tools/cli/flashattn
for args in "--head-dim 256 --causal --seqlen-q 16384 -b 1 --heads 8" \
  "--head-dim 256 --causal --seqlen-q 4096 -b 2 --heads 8 --dtype fp16" \
  "--head-dim 128 --causal --seqlen-q 8192 -b 1 --heads 16 --heads-kv 4" \
  "--head-dim 64 --causal --seqlen-q 16384 -b 1 --heads 32" \
  "--head-dim 128 --causal --seqlen-q 3000 --seqlen-k 5000 -b 2 --heads 8" \
  "--head-dim 256 --window=-1,64 --seqlen-q 4096 -b 1 --heads 8 --alibi"; do
  timeout 90 $cli run --backend cuda_sm90 --repeat 2 --verify sample $args >>"$out/cli.txt" 2>&1
  log "cli [$args] rc=$?"
done
for spec in base new; do
  PYTHONPATH=$bld/pyroot timeout 90 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
    --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py --rows 256:1:16384,64:1:16384,128:1:16384,256:1:4096 \
    --builds $spec >"$out/ncu_$spec.csv" 2>/dev/null
done
python3 - "$out"/ncu_base.csv "$out"/ncu_new.csv <<'PY' | tee -a "$out/summary.txt"
import csv, sys
for path in sys.argv[1:]:
    rows = list(csv.reader(open(path)))
    his = [i for i, r in enumerate(rows) if r and r[0] == "ID"]
    for r in rows[his[0] + 2:] if his else []:
        d = dict(zip(rows[his[0]], r))
        print(path[-12:], d["Kernel Name"][30:75], d["gpu__time_duration.sum"], d["dram__bytes_read.sum"],
              d["lts__t_sector_hit_rate.pct"])
PY
sm90_ctrl_copy
for pass in "p1 base,new,ctrl" "p2 ctrl,new,base" "p3 new,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 1 2048,4096,8192,16384 60 150
  sm90_ab "$1" "$2" 64 1 2048,4096,16384 60 150
  sm90_ab "$1" "$2" 128 1 2048,4096,16384 60 150
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base new ctrl | tee -a "$out/summary.txt"
log total
