#!/usr/bin/env bash
# Prepared in session 24, not run: d128's mask form for every other kernel (FLASHATTN_SM90_MASK_FORM_OTHER=2). With
# interleaved timing session 24 read it +0.41..+0.49% at d256 causal 1k-4k and +0.0..+0.3% elsewhere (one pass,
# s24_final.sh); it applies to the d64, d96, d192, (192, 128) and large-V kernels too, unmeasured. Prediction:
# d256 causal +0.3..+0.6%, d64 causal -0.5..+1%, non-causal rows unchanged (+-0.1%). One call (H200): the suites
# for every head dim with the switch (fp16 + bf16), racecheck and synccheck on the masked spread cases, then
# three paired passes over the causal rows (d64 / d96 / d192 / d256, 512-16k) and one over the non-causal d64 /
# d256 rows. Ask for an H200; if it pays everywhere, flip the default and record it (forward_config.h).
#   bash bench/integration/s25_mask_form.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s25m
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
flags="-DFLASHATTN_SM90_MASK_FORM_OTHER=2"
test_cli_build "64;96;192;256" "fp16;bf16" 8 "$flags" &
PY_DIMS="64;96;192;256" sm90_build_py base "" 4 400 &
PY_DIMS="64;96;192;256" sm90_build_py mfo2 "$flags" 4 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
multicast_checks 200
sm90_ctrl_copy
paired_passes base,mfo2,ctrl 64,96,192,256 1 512,1024,2048,4096,8192,16384 3 60
paired_passes base,mfo2,ctrl 64,256 0 512,2048,8192 1 60
paired_summary base mfo2 ctrl
log total
