#!/usr/bin/env bash
# Ran in session 30 on d1a983c (records s30_pf_early_summary.txt, s30_pf_early_ab.jsonl). The flags meant then:
# PREFETCH_EARLY=1 = early (after the tile's second key block) wherever PREFETCH_NEXT_TILE is on; since 5f221db
# PREFETCH_EARLY=1 means the two-consumer d128 kernels only, and =2 with PREFETCH_AFTER_BLOCKS=2 is that old form.
# Prepared in session 29, not run: PREFETCH_EARLY=1 (forward_config.h; default 0, default SASS identical): the next
# tile's Q prefetch goes out after the tile's second key block's loads instead of after its last. Session 29's Q
# prefetch (PREFETCH_NEXT_TILE) gained in the masked d256 64-key kernels (causal 512 +3.5%) and lost in the O-over-V
# d256 kernels (non-causal 512 / 1k -2.8 / -1.9%) and at d128 (512 -0.7%), where it goes out beside the tile's last
# loads, the next tile's Q load and the O stores. This reads whether it is the prefetch or its timing that costs:
# builds base (the default: Q prefetch late, 64-key kernels without O over V), late2 (PREFETCH_NEXT_TILE=2: late, every
# dense kernel; session 29's measured form), early2 (=2 with PREFETCH_EARLY=1), early1 (=1 with PREFETCH_EARLY=1:
# the default's kernels, early), a control copy; the tests / CLI with early2 (d64 / d128 / d256, fp16 + bf16), a
# CLI run with a short limit, the sm90 suites and the multicast sanitizers; paired, three passes.
# Local SASS: with PREFETCH_EARLY=1 the producers spill 20-52 bytes (24-register threads: the next tile's decode now
# sits inside the key-block loop), the consumers nothing.
# Prediction: early2 against late2 +1..+3% on d256 non-causal 512 / 1k and ±0.5% elsewhere; early1 against base
# ±0.5% (the masked d256 gain already comes a tile ahead).
# One H200 call (~5 minutes).
#   bash bench/integration/s30_pf_early.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s30e
out=${OUT:-$out}
early2="-DFLASHATTN_SM90_PREFETCH_NEXT_TILE=2 -DFLASHATTN_SM90_PREFETCH_EARLY=1"
test_cli_build "64;128;256" "fp16;bf16" 4 "$early2" &
PY_DIMS="64;128;256" sm90_build_py base "" 3 300 &
PY_DIMS="64;128;256" sm90_build_py late2 "-DFLASHATTN_SM90_PREFETCH_NEXT_TILE=2" 3 300 &
PY_DIMS="64;128;256" sm90_build_py early2 "$early2" 3 300 &
PY_DIMS="64;128;256" sm90_build_py early1 "-DFLASHATTN_SM90_PREFETCH_EARLY=1" 3 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
cli_or_stop "--head-dim 256 --seqlen-q 1024 -b 4 --heads 8 --heads-kv 8" || exit 1
cli_runs "--head-dim 256 --causal --seqlen-q 2048 -b 2 --heads 8 --heads-kv 2" \
  "--head-dim 128 --causal --seqlen-q 4096 -b 2 --heads 16 --heads-kv 4"
cli_summary
sm90_ctrl_copy
multicast_checks 150
paired_passes base,ctrl,late2,early2,early1 256 0 512,1024 3 100
paired_passes base,ctrl,late2,early2,early1 256 1 512,1024,4096 3 100
paired_passes base,ctrl,late2,early2,early1 128 0 512,1024,4096 3 120
paired_passes base,ctrl,late2,early2,early1 128 1 512,1024 2 80
paired_passes base,ctrl,late2,early2,early1 64 0 512 2 60
paired_summary base ctrl late2 early2 early1
log total
