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
PYTHONPATH=$bld/pyroot timeout 200 ncu --section SourceCounters --section WarpStateStats --profile-from-start off \
  --kernel-name regex:forward_kernel -o /tmp/s24p-4096 -f python3 bench/ncu_grid_target.py --rows 256:1:4096 \
  --builds new >"$out/ncu_4096.log" 2>&1
log "ncu rc=$?"
ncu -i /tmp/s24p-4096.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip >"$out/sass_d256_causal_4096.csv.gz"
log "pages: $(stat -c %s "$out/sass_d256_causal_4096.csv.gz") B"
ncu -i /tmp/s24p-4096.ncu-rep --page details --csv >"$out/details_4096.csv" 2>/dev/null
log total
