"""Session 55: decodes of more tiles than SMs, where the rule never splits (split_kv_plan.h: sms / tiles = 0).
Batch 32 of GQA 32/8 makes 256 tiles (1.94 rounds of 132 SMs) and reads 0.95-0.98x of cuDNN's speed, batch 16
(128 tiles) at or above it; s54_rounds.sh read batch 33 (two whole rounds) at 1.01-1.02x of batch 32's time.
If a CTA's rate is what bounds a round, a batch of 1.2-1.5 rounds loses up to a third of its time to the
partial round, and even splits (tiles x splits items on the persistent schedule, the arrival counter's
combine) win it back where ceil(tiles x splits / sms) / splits falls. Requested counts 2-4 against the rule's
(1) at batches 17-40, SDPA beside the rule's rows. One build.

    python3 bench/integration/s55_batches.py new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, "dense", n, b, s) for n in (1024, 4096, 16384) for b in (17, 20, 24, 28, 32, 40)
        for s in (0, 2, 3, 4)]
ROWS += [(64, 32, 8, "dense", 4096, b, s) for b in (24, 32) for s in (0, 2, 4)]
ROWS += [(256, 16, 8, "dense", 4096, b, s) for b in (20, 24) for s in (0, 2)]

if __name__ == "__main__":
    run(ROWS, lambda d, hq, hk, layout, length, batch, splits: splits == 0,
        lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
