#!/usr/bin/env bash
# Session 49 (issue 6): s49_cache2.sh's steps after kTailBoxes was extended from the narrow tile to the 64-row
# decode tile (producer.h: every one-consumer kernel; both tiles' consumers mask K's rows past the end by select,
# and fix_tail zeroes V's), against the tree of session 48 (s49_cache.patch, every src/ change of the session,
# reversed). s49_cache4.sh had read the 64-row tile's paged decode (64/4, pages of 64) at 24.1 us for 1000 keys
# against 12.5 at 1024 (the tail block gathered).
# Prediction: suites pass, memcheck / racecheck clean; paged 64/4 at 1000 keys ~13 us (0.5 of base), pages of 16
# likewise, batch 8 ~0.55; every other row as in s49_cache4.sh.
#   bash bench/integration/s49_cache5.sh
set -uo pipefail
# s49_cache2.sh's steps on this tree, as call s49e.
exec bash bench/integration/s49_cache2.sh s49e
