#!/usr/bin/env bash
# Run in session 37 and cut by the session's device budget before its tables came back; run again in session 38
# (s37_prefetch_summary.txt, s37_prefetch_varlen_{16384_p1,16384_p2,2048_p3}.md): vp / base 0.965-1.044, means
# 0.999 / 1.006 at 16k and 1.000 at 2k tokens, no gain; the switch was removed (code in cf4d679, where this
# script still builds it).
# VARLEN_PREFETCH=1: varlen problems with cu_seqlens_q take the dense kernels' next-tile Q prefetch (into L2, while
# the current tile runs) through the launch's Q map encoded over the packed rows of every sequence (a map in
# parameter space: no acquire). The varlen call on equal lengths runs 1.5-5% below the batched call on the same
# tensors (session 36), which has this prefetch (+0.3..+3.5% where it was kept, sessions 29-31).
# Builds: the C++ tests and CLI with the switch (d128 / d256, fp16 + bf16) and the Python extension twice (base, vp;
# d128 / d256 bf16). The varlen and KV-cache sm90 suites with it, racecheck / synccheck on varlen cases, float64-
# checked CLI varlen runs; then bench/varlen_compare.py, base against vp in 400 ms stints at 16k packed tokens, two
# passes, and one pass at 2k tokens on d128 if the call's time allows.
# Prediction: vp / base +0.5..+2% on the unmasked rows, +0..+1% masked, most on the short mix.
# One H200 call (~5 minutes).
#   bash bench/integration/s37_prefetch.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s37v
switch_builds vp "-DFLASHATTN_SM90_VARLEN_PREFETCH=1" "128;256" "128;256" 300
rm -f "$out"/py_*_build.log
varlen_checks 120
cli_runs "-b 4 --heads 16 --seqlen-q 2048 --seqlen-k 2048 --head-dim 128 --varlen" \
  "-b 6 --heads 8 --seqlen-q 1500 --seqlen-k 1500 --head-dim 256 --varlen --causal"
cli_summary
# varlen PASS TOKENS HDIMS LIMIT: base against vp in stints, the table and log into $out.
varlen() {
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "$4" python3 bench/varlen_compare.py --builds base,vp \
    --hdims "$3" --no-sm80 --sustained 4 --tokens "$2" --out "$out" --tag "s37v-$2-$1" >"$out/varlen_$2_$1.log" 2>&1
  log "varlen $2 $1 rc=$?"
  # Archived after every pass, so that a call cut by its limit still returns the passes it finished.
  (cd "$out" && tar -czf "${OUT:-/tmp}/varlen.tgz" varlen* 2>/dev/null)
}
varlen p1 16384 128,256 110
varlen p2 16384 128,256 110
varlen p3 2048 128 45
log total
