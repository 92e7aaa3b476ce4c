#!/usr/bin/env bash
# Prepared in session 23, not run: PC samples of the d256 kernel at causal 4k (the d256 row every reading keeps
# below the normalised FA3 anchor: 1.08-1.19 of cuDNN against the anchor's 1.175; block widths 64 / 80, with or
# without K/V multicast, all read within 1.5%, s23_b64*.sh), per SASS instruction, as s21_causal_profile.sh did
# for d128 causal 2k: how much of a tile goes to per-tile work, the diagonal blocks' mask, the turn barriers and
# the cluster's stage releases (the 80-key multicast instance runs this row). Ask for an H200.
#   bash bench/integration/s24_d256_profile.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s24p
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS="256" sm90_build_py new "-lineinfo" 12 300
rm -f "$out"/py_*_configure.log
sass_profile 256:1:4096 d256_causal_4096 200
log total
