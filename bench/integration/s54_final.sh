#!/usr/bin/env bash
# Session 54: every decode check on the final tree (the split rule's final form: s54_rule3.sh ran only the
# suites on it): the KV-cache / split-KV / workspace / cuda_sm90 forward and varlen suites, synccheck on the
# cluster cases, memcheck / racecheck on every KV-cache case of cuda_sm90, pytest's interface and dispatch files.
#   bash bench/integration/s54_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s54f
tests_and_py_build "64;128;256"
decode_change_checks
log total
