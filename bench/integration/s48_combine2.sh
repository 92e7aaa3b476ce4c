#!/usr/bin/env bash
# Session 48 (issue 6), the third form of the narrow tile's combine (decode_consumer.h combine_narrow_pieces: one
# float4 of the records' rows per thread, 16 pieces a round, the round's weights independent of each other; only
# where s.rows x dv <= 512, split_kv.h's combine for the others) and the split count's cap on a tile's records
# (split_kv_plan.h kMaxTileRecordFloats, narrow tile only), against the tree built with NARROW_COMBINE=0 (which
# keeps the cap). s48_combine.sh's steps (suites, sanitizers, s46_decode_dims.py narrow / narrow256 rows, the
# d256 split sweep). The first two forms (s48_combine.sh on commits 405b87e and 41463ab): 4-row tiles
# 0.94-1.0, 2-row d256 0.81-0.98, but 8-row tiles 1.02-1.27.
# Prediction: rows x dv <= 512 as the second form (0.80-0.98), 8-row tiles 1.00 (the same combine as base); the
# d256 sweep's auto within 1.05 of the best count on every row (MQA and 32/4 at 16k: 16 pieces).
#   bash bench/integration/s48_combine2.sh
set -uo pipefail
# s48_combine.sh's steps on this tree, as call s48d.
exec bash bench/integration/s48_combine.sh s48d
