#!/usr/bin/env bash
# Session 17 (issue 6), DIAGNOSTIC on an H100 (kind nvidia-h100-x1): where our L2 traffic at d256 causal 512 / 1k
# goes against cuDNN's (s17_d256mc_short.sh: lts__t_bytes 811 / 1191 MB against 607 / 806 MB; DRAM reads 247 / 280
# against 201 MB), by source unit and operation (SM reads and writes, the L2 fabric between the two partitions,
# DRAM fills), plus the SM clock under ncu; and the 64-key d256 kernel at causal 1k on the H100
# (FLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=1024; 1.00 of the 80-key kernel on the H200 of session 8).
# The candidate metrics are filtered against `ncu --query-metrics` on the device, so one missing name does not
# void the run.
# Prediction: SM read sectors (Q, K, V) ~1.3-1.5x cuDNN's at 1k (the 80-key blocks past the diagonal) and close
# at 512 (64-key blocks); fabric traffic a large share of the difference (sections that place a head's tiles on
# both partitions). b64k1k at causal 1k: 0.99-1.02 of base.
#   bash bench/integration/s17_l2_short.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s17l2
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "$out"/metrics.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
PY_DIMS="256" sm90_build_py base "" 8 300 &
PY_DIMS="256" sm90_build_py b64k1k "-DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=1024" 8 300 &
ncu --query-metrics --chip gh100 >"$out/metrics.txt" 2>&1
wait
want="gpu__time_duration lts__t_bytes dram__bytes_read dram__bytes_write lts__t_sectors_op_read lts__t_sectors_op_write
lts__t_sectors_op_atom lts__t_sectors_op_red lts__t_sectors_srcunit_tex lts__t_sectors_srcunit_tex_op_read
lts__t_sectors_srcunit_tex_op_write lts__t_sectors_srcunit_ltcfabric lts__t_sectors_srcnode_gpc
lts__t_sectors_aperture_device lts__t_sectors_lookup_hit lts__t_sectors_lookup_miss lts__t_sectors_srcunit_l1
l1tex__m_xbar2l1tex_read_bytes l1tex__m_l1tex2xbar_write_bytes lts__t_sectors sm__cycles_elapsed
smsp__cycles_active gpc__cycles_elapsed"
metrics=""
for m in $want; do
  if grep -qE "^$m[[:space:]]" "$out/metrics.txt"; then metrics+="${metrics:+,}$m.sum"; else log "no metric $m"; fi
done
metrics+=",sm__cycles_elapsed.avg.per_second"
log "metrics: $metrics"
PYTHONPATH=$bld/pyroot timeout 90 ncu --metrics "$metrics" --profile-from-start off --csv --page raw \
  python3 bench/ncu_grid_target.py --rows 256:1:512,256:1:1024,256:0:8192 --builds base,b64k1k --cudnn \
  >"$out/ncu.csv" 2>"$out/ncu_err.txt"
log "ncu rc=$? $(tail -2 "$out/ncu_err.txt" | tr '\n' ' ')"
sm90_ctrl_copy
for pass in "p1 base,b64k1k,ctrl" "p2 ctrl,b64k1k,base" "p3 b64k1k,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 1 512,1024 60 80
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base b64k1k ctrl | tee -a "$out/summary.txt"
log total
