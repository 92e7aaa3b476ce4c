// Internals shared by the CPU tiled backend's translation units: tile shapes,
// how the caller's workspace is carved up, instruction-set dispatch, and the
// pieces one file hands to another (KV-cache append, split combine).
//
// The backend is the FlashAttention algorithm on fp32 tiles: a work item is
// (sequence, kv head, query tile[, key split]), or (sequence[, key split]) for
// every kv head at once when there are few query rows (decoding: the streaming
// path, which reads K/V in memory order); the query heads of a GQA group are
// packed into the rows of one query tile ("pack GQA") so every K/V tile
// converted to fp32 serves the whole group. Scores are kept transposed
// (keys x queries) so that the softmax statistics of all rows of a tile update
// as vectors.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "backend.h"
#include "common/params.h"

namespace flashattn::detail::cpu_tiled {

inline constexpr int kBlockQ = 128;  // packed query rows per tile
inline constexpr int kBlockK = 64;   // keys per KV tile
// fp32 rows are padded to whole 64-byte vectors (zero-filled) so the
// micro-kernels never need a scalar tail.
inline constexpr int kPad = 16;

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
inline std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

// Hands out 64-byte aligned pieces of one scratch region. Used twice with the
// same sequence of requests: once with a null base to measure (workspace_size),
// once over the real workspace, so the two can never disagree.
class Carver {
 public:
  explicit Carver(void* base) : base_(static_cast<char*>(base)) {}
  template <class T>
  T* take(std::int64_t count) {
    offset_ = round_up(static_cast<std::int64_t>(offset_), 64);
    T* p = base_ ? reinterpret_cast<T*>(base_ + offset_) : nullptr;
    offset_ += static_cast<std::size_t>(count) * sizeof(T);
    return p;
  }
  std::size_t bytes() const {
    return static_cast<std::size_t>(round_up(static_cast<std::int64_t>(offset_), 256));
  }

 private:
  char* base_;
  std::size_t offset_ = 0;
};

enum class Isa { baseline, avx2, avx512 };
inline Isa detect_isa() noexcept {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return Isa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::avx2;
  return Isa::baseline;
}

// run() with the instruction set chosen by the caller instead of detected:
// lets the tests exercise every compiled copy on one machine. isa must be
// supported by the CPU.
Status run(const AttentionParams& p, const ExecutionContext& ctx, Isa isa) noexcept;
Status run(const BackwardParams& p, const ExecutionContext& ctx, Isa isa) noexcept;

// Asks for the K and V rows of keys [j0, j0 + count) of sequence b to be
// brought into cache ahead of use. K/V rows of one head are a whole row of all
// heads apart (often several KB), one or two rows per page, which defeats the
// hardware's streaming prefetch; without this, decoding (one query row per
// head, every key used once) runs at memory latency instead of bandwidth.
inline void prefetch_keys(const AttentionParams& p, const SequenceLengths& seq, std::int64_t b,
                          std::int64_t head_kv, std::int64_t j0, std::int64_t count) {
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(p.dtype));
  const std::int64_t k_bytes = p.head_dim * elem, v_bytes = p.head_dim_v * elem;
  for (std::int64_t j = j0; j < j0 + count; ++j) {
    const char* k = static_cast<const char*>(p.k.data) + key_offset(p, p.k, seq, b, j, head_kv) * elem;
    const char* v = static_cast<const char*>(p.v.data) + key_offset(p, p.v, seq, b, j, head_kv) * elem;
    for (std::int64_t x = 0; x < k_bytes; x += 64) __builtin_prefetch(k + x, 0, 2);
    for (std::int64_t x = 0; x < v_bytes; x += 64) __builtin_prefetch(v + x, 0, 2);
  }
}

// The K and V rows of keys [j0, j0 + count) of sequence b, every kv head, in
// memory order (all heads of key j, then key j + 1): the streaming forward's
// prefetch, one key range of the whole sequence at a time.
inline void prefetch_all_heads(const AttentionParams& p, const SequenceLengths& seq, std::int64_t b,
                               std::int64_t j0, std::int64_t count) {
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(p.dtype));
  const std::int64_t k_bytes = p.head_dim * elem, v_bytes = p.head_dim_v * elem;
  for (std::int64_t j = j0; j < j0 + count; ++j)
    for (std::int64_t h = 0; h < p.heads_kv; ++h) {
      const char* k = static_cast<const char*>(p.k.data) + key_offset(p, p.k, seq, b, j, h) * elem;
      for (std::int64_t x = 0; x < k_bytes; x += 64) __builtin_prefetch(k + x, 0, 2);
    }
  for (std::int64_t j = j0; j < j0 + count; ++j)
    for (std::int64_t h = 0; h < p.heads_kv; ++h) {
      const char* v = static_cast<const char*>(p.v.data) + key_offset(p, p.v, seq, b, j, h) * elem;
      for (std::int64_t x = 0; x < v_bytes; x += 64) __builtin_prefetch(v + x, 0, 2);
    }
}

// Query heads per kv head: the rows of one packed tile are (i, head) pairs,
// row R = i * group + (head % group).
inline std::int64_t group_size(const AttentionParams& p) { return p.heads / p.heads_kv; }

// Packed query tiles of the longest sequence (p.seqlen_q bounds every sequence).
inline std::int64_t max_query_tiles(const AttentionParams& p) {
  return ceil_div(p.seqlen_q * group_size(p), kBlockQ);
}

// Packed rows per kv head (seqlen_q * group) up to which the forward takes the
// streaming path: a work item is (sequence, key split) with the rows of every
// kv head resident, so K/V are read in memory order (see tiled_forward.cpp).
inline constexpr int kStreamRows = 32;

// The padded row count of the streaming path's tiles, or 0 when the forward
// takes the tile path. From shapes only.
std::int64_t stream_rows(const AttentionParams& p) noexcept;

// Number of key splits of the forward: p.num_splits when given, else enough
// to make about kSplitItems work items when the unsplit items are fewer
// (decoding). From shapes only, never the thread count, so that the forward's
// result is bitwise the same for every number of threads.
inline constexpr int kSplitItems = 16;
int resolve_splits(const AttentionParams& p) noexcept;

// Work (roughly FLOPs) that justifies one more thread. Starting a thread team
// costs microseconds on an idle machine but milliseconds on an oversubscribed
// one (woken threads wait for a core), against about 0.3 ms of one core's work.
inline constexpr double kWorkPerThread = 4e6;

// Threads worth using, at most `threads`, for `work` spread over `items`
// independent pieces: never an idle thread, never a team for a tiny problem.
inline int threads_for_work(double work, std::int64_t items, int threads) {
  const double by_work = work / kWorkPerThread;
  std::int64_t team = std::min<std::int64_t>(threads, items);
  if (by_work < static_cast<double>(team)) team = static_cast<std::int64_t>(by_work);
  return static_cast<int>(std::max<std::int64_t>(team, 1));
}

// Adds options.bias to a score tile s[jj * ld + r] of rows r < rows (query query[r] of head head[r]) and
// keys j0 + jj, jj < cols; a bool bias hides its false keys (-inf). Padding rows stay as they are.
void add_score_bias(const AttentionParams& p, std::int64_t b, const std::int64_t* query,
                    const std::int64_t* head, std::int64_t rows, std::int64_t j0, int cols, float* s,
                    std::int64_t ld) noexcept;

// Writes k_new/v_new into the cache at positions cache_end + t of every
// sequence (k_new rotated when rotary_dim > 0). Must complete before attention.
void append_new_kv(const AttentionParams& p, int threads) noexcept;

// Rotates x (a q or k row in fp32, head_dim long) in place at rotary position
// pos and rounds the rotated elements to p.dtype, as a kernel storing the row
// in the input dtype would.
void rotate_row(const AttentionParams& p, float* x, std::int64_t pos) noexcept;

// Split-KV partial results of the forward, in the workspace:
// out_partial[split][b][i][head][c] and lse_partial[split][b][i][head],
// with i < p.seqlen_q, c < p.head_dim_v.
struct SplitPartials {
  float* out = nullptr;
  float* lse = nullptr;
  int splits = 1;
  std::int64_t out_index(const AttentionParams& p, std::int64_t split, std::int64_t b, std::int64_t i,
                         std::int64_t head) const {
    return lse_index(p, split, b, i, head) * p.head_dim_v;
  }
  std::int64_t lse_index(const AttentionParams& p, std::int64_t split, std::int64_t b, std::int64_t i,
                         std::int64_t head) const {
    return ((split * p.batch + b) * p.seqlen_q + i) * p.heads + head;
  }
};

// Merges the splits of every used query row into p.out / p.lse, counting the
// sink (if any) once in the denominator.
void combine_split_partials(const AttentionParams& p, const SplitPartials& partials, int threads) noexcept;

}  // namespace flashattn::detail::cpu_tiled
