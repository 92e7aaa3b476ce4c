// One attention problem: its description (from flags or a bench grid) and its
// random host-side inputs. Empty problems (batch 0, seqlen 0) are valid.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "device_buffer.h"
#include "flashattn/flashattn.h"

namespace flashattn::cli {

struct ProblemSpec {
  std::int64_t batch = 2;
  std::int64_t seqlen_q = 512;
  std::int64_t seqlen_k = -1;  // -1: seqlen_q
  std::int64_t heads = 8;
  std::int64_t heads_kv = 0;  // 0: heads
  std::int64_t head_dim = 64;
  std::int64_t head_dim_v = 0;  // 0: head_dim
  DType dtype = DType::bfloat16;
  bool causal = false;
  Window window{};
  float softcap = 0.f;
  bool alibi = false;
  float dropout = 0.f;
  bool sink = false;
  bool key_padding = false;  // a bool (b, 1, 1, sk) options.bias hiding each sequence's last quarter of keys
  bool varlen = false;       // random sequence lengths in [1, seqlen]
  std::int64_t page_size = 0;  // > 0: K/V in a paged cache of this many rows per page
  bool backward = false;
  bool deterministic = false;  // backward: the bitwise-reproducible mode
  std::uint64_t seed = 0;

  // Fills in the "same as" defaults (seqlen_k < 0, heads_kv or head_dim_v 0).
  void resolve();
  // Paged or variable-length problems go through forward_varlen/backward_varlen.
  bool uses_varlen_api() const { return varlen || page_size > 0; }
  // "b2 sq512 sk512 h8/8 d64 bf16 causal ...": one line for tables and logs.
  std::string describe() const;
};

// A host array of one operand: the values in the problem's dtype, and the
// same values (exactly, since they were rounded first) in fp32 for the reference.
struct HostOperand {
  DeviceBuffer values;  // dtype of the problem, host memory
  DeviceBuffer values_f32;
  std::int64_t numel = 0;
};

// The random inputs of one problem. Row-major layouts: batched (b, s, heads, dim)
// or, for the varlen API, packed (total, heads, dim); with equal lengths the two
// are the same bytes. With paging, k_paged/v_paged hold the same rows scattered
// over shuffled pages of the cache and block_table says where.
struct HostProblem {
  ProblemSpec spec;
  std::vector<std::int32_t> len_q, len_k;  // per sequence
  std::vector<std::int32_t> cu_q, cu_k;    // prefix sums, b + 1 entries
  std::int64_t rows_q = 0, rows_k = 0;     // total rows of q and k
  HostOperand q, k, v, dout;               // dout only for backward
  std::vector<float> alibi_slopes;         // (h), when spec.alibi
  std::vector<float> sink;                 // (h), when spec.sink
  std::vector<std::uint8_t> key_mask;      // (b, sk), when spec.key_padding: 1 keeps the key
  std::int64_t num_blocks = 0, max_blocks = 0;
  std::vector<std::int32_t> block_table;  // (b, max_blocks)
  DeviceBuffer k_paged, v_paged;          // (num_blocks, page_size, hk, d / dv), dtype
};

HostProblem make_host_problem(const ProblemSpec& spec);

// Forward FLOPs: two matmuls, 2 * (d + dv) per visible (query, key) pair and head,
// i.e. 4 * b * h * sq * sk * d when dv == d. Causal counts half the pairs (the
// usual convention); a window counts the visible pairs exactly. Backward is 2.5x.
double forward_flops(const HostProblem& problem);
double problem_flops(const HostProblem& problem);  // forward or backward, per spec.backward

bool parse_dtype(const std::string& text, DType* dtype);
bool parse_backend(const std::string& text, Backend* backend);

}  // namespace flashattn::cli
