#!/usr/bin/env bash
# Session 50's first call: session 49's final tree (855fe0e) verified by final49.sh's steps (gpu_check's build,
# tests and python steps; memcheck / racecheck on every KV-cache case of cuda_sm90 and the workspace checks;
# synccheck on session 49's three new KV-cache cases). Run as a copy of final49.sh whose work folder was /tmp/f50
# (the same steps; the record is final50a_summary.txt).
# Prediction: every suite passes, sanitizers clean (final49.sh ran the tree before the review's commit).
#   bash bench/integration/final50a.sh
set -uo pipefail
exec bash bench/integration/final49.sh
