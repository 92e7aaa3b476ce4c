"""Session 54: whether the static schedule's partial last round is what large-batch decodes lose to cuDNN
(s54_standing.py: GQA 32/8 d128 at batch 32 0.95-0.98x of cuDNN's speed, batch 16 level). Batch 32 makes 256
tiles, 1.94 rounds of 132 SMs; batch 33 makes 264, two whole rounds; batch 64 / 66 make 3.88 / 4. If the
partial round is the loss, our time barely grows from batch 32 to 33 (and 64 to 66) while cuDNN's grows ~3%.
One build, SDPA beside every row (s50_cluster.py's protocol).

    python3 bench/integration/s54_rounds.py new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, "dense", n, b, 0) for n in (1024, 4096, 16384) for b in (16, 32, 33, 64, 66)]
ROWS += [(64, 32, 8, "dense", 4096, b, 0) for b in (32, 33)]

if __name__ == "__main__":
    run(ROWS, lambda *row: True, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
