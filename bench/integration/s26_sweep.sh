#!/usr/bin/env bash
# Prepared in session 25, not run: two questions session 25's defaults opened, with paired timing (three passes).
#  - The d128 non-causal rows from 2k now run the single-CTA kernel (KV_MULTICAST_MIN_SEQLEN 0), whose tile order
#    (one head per L2 section at every length, HEAD_MAJOR_MAX_SEQLEN -1) session 8 measured with do_bench while
#    those rows ran the cluster kernel: hm2k / hm4k end the one-head sections after 2048 / 4096 keys (then
#    1/8-of-L2 sections, SECTION_L2_DIVISOR). Prediction: within +-0.5% (a head's K/V is 1-8 MB at 2k-16k, L2
#    holds it either way).
#  - The decoded tile handoff at d192 ((192, 128) and (192, 192)), which session 25 measured only at d64 / d128 /
#    d256 (dh2 = every dense kernel; its d64 rows equal base, its d128 rows repeat session 25's -0.3..-3.2%).
#    Prediction: d192 -1..+1%.
# One H200 call (~6 minutes): builds of d128 + d192, paired d128 non-causal and d192 causal and not.
#   bash bench/integration/s26_sweep.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s26w
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
sweep_builds "128;192" 3 hm2k=-DFLASHATTN_SM90_HEAD_MAJOR_MAX_SEQLEN=2048 \
  hm4k=-DFLASHATTN_SM90_HEAD_MAJOR_MAX_SEQLEN=4096 dh2=-DFLASHATTN_SM90_DECODED_HANDOFF=2
paired_passes base,ctrl,hm2k,hm4k 128 0 1024,2048,4096,8192,16384 3 60
paired_passes base,ctrl,dh2 192 1,0 512,1024,2048,4096,8192,16384 3 100
# shellcheck disable=SC2086  # one build name per word
paired_summary ${sweep_names//,/ }
log total
