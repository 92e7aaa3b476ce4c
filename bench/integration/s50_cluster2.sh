#!/usr/bin/env bash
# Session 50 (issue 6): s50_cluster.sh's steps after the cluster combine was limited to launches whose clusters
# all fit on the GPU at once (forward_launch.h: cudaOccupancyMaxActiveClusters; s50_cluster.sh had read 32 tiles
# of 4 pieces at 1.19-1.21x the counter's time, two waves), then the split counts' sweep (s50_cluster.py
# S50_ROWS=sweep) for the count's rule on the cheaper combine.
# Prediction: the rows of s50_cluster.sh as there (1000 keys 0.73-0.85 of base), batch 4 with 4 pieces back to
# base's time (the counter's combine) unless 32 clusters of 4 fit; suites pass, sanitizers clean.
#   bash bench/integration/s50_cluster2.sh
set -uo pipefail
S50_ROWS=sweep exec bash bench/integration/s50_cluster.sh s50b
