#!/usr/bin/env bash
# Session 49 (issue 6): s49_cache3.sh's steps after the change its racecheck asked for, against the tree of
# session 48 (s49_cache.patch: every src/ change of the session, reversed). racecheck (every KV-cache case of
# cuda_sm90, grid and drawn) had reported the narrow tile's zeroing of V's rows past the end (a consumer's
# st.shared) against the paged producer's cp.async into the same stage: consumers arrive on an empty barrier by
# their warp's leader alone. The paged producer now zeroes those rows itself (producer.h kTailBoxes, fix_tail:
# the tail block's V boxes land on a barrier of its own, tail_full, and the warp completes v_full after its
# stores), so the consumers write no K / V stage of a paged launch; the dense narrow tile keeps the consumer's
# zeroing (its producer writes by TMA alone: racecheck clean in s49_cache.sh).
# Prediction: racecheck and memcheck clean; the paged narrow rows within 0.3 us of s49_cache3.sh's (the producer
# waits for the tail's V after issuing the next block), the other rows as there.
#   bash bench/integration/s49_cache4.sh
set -uo pipefail
# s49_cache2.sh's steps on this tree, as call s49d.
exec bash bench/integration/s49_cache2.sh s49d
