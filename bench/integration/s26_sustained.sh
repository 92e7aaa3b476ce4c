#!/usr/bin/env bash
# Session 26, call 6: do the multicast decisions of sessions 25 and 26 hold under sustained load? The last grid
# (compare-20261128-083528) read the rows this session changed 1-2.5% below their old ratio to cuDNN (beyond the
# card's drift of the unchanged rows, ~1%), where paired timing had read +2..+4%; and the paired standing put ours
# at 1.25x cuDNN on d128 causal 16k where the grid reads 1.14x. Hypothesis: call-by-call interleaving gives every
# build (and cuDNN) one shared clock, so it hides what a kernel's energy per call does to its own clock at the
# power cap (session 15); the multicast saves L2 traffic, i.e. energy. sm90r_ab.py --sustained interleaves stints
# instead (150 ms of a build's own back-to-back calls, then 10 timed calls; five rounds, order rotated).
# Builds: new (the defaults), ctrl (its copy), old (session 25's final defaults: causal multicast at d128 from
# 8k and at d256 from 2049 keys, 64-key d256 blocks and placement to 2048), mu (old + session 24's unmasked d128
# multicast from 2048 keys). Prediction if the hypothesis holds: old / new > 1 on d128 causal 8k / 16k and d256
# causal 8k, mu / new > 1 on d128 non-causal 2k-16k; ctrl / new within 0.5%.
#   bash bench/integration/s26_sustained.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s26u
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
old="-DFLASHATTN_SM90_KV_MULTICAST_CAUSAL=8192 -DFLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=2049"
old+=" -DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=2048 -DFLASHATTN_SM90_PLACEMENT_MAX_SEQLEN=2048"
PY_DIMS="128;256" sm90_build_py new "" 5 300 &
PY_DIMS="128;256" sm90_build_py old "$old" 5 300 &
PY_DIMS="128;256" sm90_build_py mu "$old -DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=2048" 5 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy new
sustained() { # HDIM CAUSAL SEQLENS PASS
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 80 python3 bench/sm90r_ab.py --builds new,ctrl,old,mu \
    --hdims "$1" --causal "$2" --seqlens "$3" --sustained 5 2>&1 | grep -v Warning |
    sed "s/^{/{\"pass\": \"p$4\", /" >>"$out/ab.jsonl"
  log "sustained p$4 d $1 causal $2"
}
for pass in 1 2 3; do
  sustained 128 1 8192,16384 "$pass"
  sustained 128 0 2048,4096,16384 "$pass"
  sustained 256 1 4096,8192 "$pass"
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" new ctrl old mu | sed -n '/^sustained/,$p' |
  tee -a "$out/summary.txt"
log total
