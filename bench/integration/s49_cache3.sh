#!/usr/bin/env bash
# Session 49 (issue 6): s49_cache2.sh's steps after two changes, against the tree of session 48 (s49_cache.patch,
# every src/ change of the session, reversed). (1) The decode kernels' gather of a paged block (producer.h
# gather_paged_block_by_rows): a table read per row, 32 rows' reads in flight at once, where the old form read
# the table for every 16-byte unit and waited for it before the copy (s49_cache2.sh: the 64-row tile's decode of
# 1000 keys in pages of 64 26.1 us against 12.5 at 1024). (2) racecheck had reported the narrow tile's zeroing
# of V's rows past the end against the gather's zero fill of the same rows (a leftpad off the box grid): the
# gather leaves those rows to the consumer now (kSkipPastEnd). Suites, memcheck / racecheck on every KV-cache
# case of cuda_sm90 (grid and drawn), synccheck on the narrow ones, s49_cache_lengths.py's rows.
# Prediction: racecheck clean; paged 64/4 at 1000 keys within ~1.5 us of 1024 (pages of 64: ~14 us, from 26);
# the other rows as in s49_cache2.sh.
#   bash bench/integration/s49_cache3.sh
set -uo pipefail
# s49_cache2.sh's steps on this tree, as call s49c.
exec bash bench/integration/s49_cache2.sh s49c
