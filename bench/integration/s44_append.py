"""Session 44: what the separate append kernel costs a KV-cache decode step on cuda_sm90 (GPU).

flash_attn_with_kvcache with k/v runs three kernels (the append, the prepare kernel of the per-sequence maps, the
attention) where the same call without k/v runs two. Each case is captured in a CUDA graph (what a serving engine
replays) and timed by CUDA events over 200 replays, three rounds interleaved; the no-append call attends over the
same number of keys (cache_seqlens + 1). Rows: bf16, GQA 32/8, d128, batch 64 and 8, caches of 512-8192 keys,
dense and 256-row pages.
"""

import json
import statistics

import torch

import flashattn


def graphed_us(fn, replays=200):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    for _ in range(20):
        graph.replay()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / replays * 1e3


def main():
    torch.manual_seed(0)
    dt = torch.bfloat16
    hq, hk, d = 32, 8, 128
    cases = []
    for batch in (64, 8):
        for cache in (512, 2048, 8192):
            for page in (0, 256):
                cases.append((batch, cache, page))
    rows = {}
    for round_ in range(3):
        for batch, cache, page in cases:
            q = torch.randn(batch, 1, hq, d, device="cuda", dtype=dt)
            k_new = torch.randn(batch, 1, hk, d, device="cuda", dtype=dt)
            v_new = torch.randn_like(k_new)
            capacity = cache + 256
            if page:
                pages_per_seq = capacity // page
                k_cache = torch.randn(batch * pages_per_seq, page, hk, d, device="cuda", dtype=dt)
                table = torch.randperm(batch * pages_per_seq, device="cuda", dtype=torch.int32).view(batch, -1)
            else:
                k_cache = torch.randn(batch, capacity, hk, d, device="cuda", dtype=dt)
                table = None
            v_cache = torch.randn_like(k_cache)
            seqlens = torch.full((batch,), cache, device="cuda", dtype=torch.int32)
            seqlens_after = seqlens + 1
            with torch.no_grad():
                append = graphed_us(lambda: flashattn.flash_attn_with_kvcache(
                    q, k_cache, v_cache, k_new, v_new, cache_seqlens=seqlens, block_table=table))
                plain = graphed_us(lambda: flashattn.flash_attn_with_kvcache(
                    q, k_cache, v_cache, cache_seqlens=seqlens_after, block_table=table))
            key = f"b{batch} cache{cache} page{page}"
            rows.setdefault(key, []).append((append, plain))
            print(json.dumps({"round": round_, "case": key, "append_us": round(append, 2),
                              "plain_us": round(plain, 2)}), flush=True)
            del k_cache, v_cache
    for key, readings in rows.items():
        append = statistics.median(a for a, _ in readings)
        plain = statistics.median(p for _, p in readings)
        print(json.dumps({"case": key, "append_us": round(append, 2), "plain_us": round(plain, 2),
                          "append - plain": round(append - plain, 2)}), flush=True)


if __name__ == "__main__":
    main()
