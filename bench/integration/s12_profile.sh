#!/usr/bin/env bash
# Session 12 (issue 6): where a d128 consumer warp's time goes. ncu (warp states, scheduler, source counters with
# per-instruction stall samples) of the default d128 kernel and cuDNN's at d128 s 8192 non-causal
# (bench/sm90L_ncu_target.py), and the SASS of the d128 bf16 translation unit (cuobjdump).
#   bash bench/integration/s12_profile.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s12pf
trap 'cp "$out/summary.txt" "$out"/*.gz "$out"/*.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT  # the profile's files too
PY_DIMS=128 sm90_build_py base "" 16 300
obj=$(find "$bld/py-base" -name 'forward_hdim128_bf16.cu.o' | head -1)
cuobjdump -sass "$obj" | gzip >"$out/sass_d128.txt.gz"
log "sass $(zcat "$out/sass_d128.txt.gz" | wc -l) lines"
sections="--section WarpStateStats --section SourceCounters --section SchedulerStats --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats"
PYTHONPATH=$bld/pyroot timeout 200 ncu $sections --import-source no --profile-from-start off \
  -o "$out/ncu_d128" python3 bench/sm90L_ncu_target.py >"$out/ncu.log" 2>&1
log "ncu rc=$?"
tail -5 "$out/ncu.log" | tee -a "$out/summary.txt"
if [[ -f $out/ncu_d128.ncu-rep ]]; then
  timeout 60 ncu -i "$out/ncu_d128.ncu-rep" --page details >"$out/ncu_details.txt" 2>&1
  timeout 60 ncu -i "$out/ncu_d128.ncu-rep" --page raw --csv 2>&1 | gzip >"$out/ncu_raw.csv.gz"
  timeout 120 ncu -i "$out/ncu_d128.ncu-rep" --page source --csv --print-source sass 2>&1 | gzip >"$out/ncu_sass.csv.gz"
  log "ncu export done"
fi
log total
