#!/usr/bin/env bash
# Session 29, second call. s29_klook.sh read K_LOOKAHEAD=1 (then: every dense kernel) at d256 causal 1k / 4k
# +1.27 / +0.47% (64-key kernels on placement clusters), d64 non-causal 512 / 1k +0.25 / +0.08%, d128 -0.7..+0.3%;
# the switch is now 0 / 1 (d = dv = 256) / 2 (every dense kernel). This call reads, paired, three passes, with a
# control copy of base (nothing is rebuilt for tests: the d256 kernels of K_LOOKAHEAD=1 are byte-identical to
# those of =2, which s29_klook.sh put through the suites and the multicast sanitizers, and the default cubins
# do not change):
#   kl2: K_LOOKAHEAD=2 on d256 causal 8k / 16k (the 80-key masked multicast instance, not yet read) beside 1k / 4k
#        again, on d64 causal 512..4k and d64 non-causal 2k / 8k / 16k (rows not read yet);
#   b64: D256_BLOCK64_MAX_SEQLEN=1024 (unmasked d256 at 1k on 64-key blocks; 0.977 of the 80-key kernel in
#        session 26, before both had O over V) on d256 non-causal 1k.
# Predictions: kl2 at causal 8k / 16k +0..+0.5% (the lookahead gained less at 4k than 1k; longer tiles); d64
#   within +-0.3%; b64 at 1k -1..+1% (O over V gained +4.5% on the 64-key 512 row and +2.3% on the 80-key 1k row).
# One H200 call (~4 minutes).
#   bash bench/integration/s29_d256.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s29d
out=${OUT:-$out}
PY_DIMS="64;256" sm90_build_py base "" 5 300 &
PY_DIMS="64;256" sm90_build_py kl2 "-DFLASHATTN_SM90_K_LOOKAHEAD=2" 5 300 &
PY_DIMS="256" sm90_build_py b64 "-DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN=1024" 5 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy
paired_passes base,ctrl,kl2 256 1 1024,4096,8192,16384 3 100
paired_passes base,ctrl,b64 256 0 1024 3 60
paired_passes base,ctrl,kl2 64 1 512,1024,2048,4096 3 100
paired_passes base,ctrl,kl2 64 0 2048,8192,16384 2 100
paired_summary base ctrl kl2 b64
log total
