#include "problem.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>

#include "common/numeric.h"

namespace flashattn::cli {
namespace {

// splitmix64: tiny, fast, and the same stream on every platform, so a --seed
// reproduces a problem exactly anywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi) {                // [lo, hi]
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  // Standard normal (Box-Muller; the second value of each pair is cached).
  float normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform();  // (0, 1]: log() stays finite
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = static_cast<float>(r * std::sin(2.0 * M_PI * u2));
    has_spare_ = true;
    return static_cast<float>(r * std::cos(2.0 * M_PI * u2));
  }

 private:
  std::uint64_t state_;
  float spare_ = 0.f;
  bool has_spare_ = false;
};

// N(0, 1) inputs, like FlashAttention's own tests: never zeros, and large enough
// that softmax is far from uniform.
HostOperand random_operand(Rng& rng, DType dtype, std::int64_t numel) {
  HostOperand op;
  op.numel = numel;
  op.values = DeviceBuffer(Device{}, static_cast<std::size_t>(numel) * dtype_size(dtype));
  op.values_f32 = DeviceBuffer(Device{}, static_cast<std::size_t>(numel) * sizeof(float));
  auto* f32 = static_cast<float*>(op.values_f32.data());
  for (std::int64_t i = 0; i < numel; ++i) {
    const float value = detail::round_to(dtype, rng.normal());
    f32[i] = value;
    detail::store_float(op.values.data(), dtype, i, value);
  }
  return op;
}

std::vector<std::int32_t> prefix_sums(const std::vector<std::int32_t>& lengths) {
  std::vector<std::int32_t> cu(lengths.size() + 1, 0);
  std::partial_sum(lengths.begin(), lengths.end(), cu.begin() + 1);
  return cu;
}

// Scatters packed rows (total_k, hk, dim) into pages following the block table.
void scatter_to_pages(const HostProblem& p, const DeviceBuffer& packed, std::int64_t row_bytes,
                      DeviceBuffer* paged) {
  *paged = DeviceBuffer(Device{}, static_cast<std::size_t>(p.num_blocks * p.spec.page_size * row_bytes));
  paged->fill_bytes(0xFF);  // rows past a sequence's end are never read: NaN would show if they were
  const auto* src = static_cast<const unsigned char*>(packed.data());
  auto* dst = static_cast<unsigned char*>(paged->data());
  for (std::int64_t b = 0; b < p.spec.batch; ++b) {
    for (std::int64_t j = 0; j < p.len_k[b]; ++j) {
      const std::int64_t block = p.block_table[b * p.max_blocks + j / p.spec.page_size];
      const std::int64_t row = block * p.spec.page_size + j % p.spec.page_size;
      std::memcpy(dst + row * row_bytes, src + (p.cu_k[b] + j) * row_bytes, row_bytes);
    }
  }
}

}  // namespace

void ProblemSpec::resolve() {
  if (seqlen_k < 0) seqlen_k = seqlen_q;
  if (heads_kv == 0) heads_kv = heads;
  if (head_dim_v == 0) head_dim_v = head_dim;
}

std::string ProblemSpec::describe() const {
  std::ostringstream s;
  s << "b" << batch << " sq" << seqlen_q << " sk" << seqlen_k << " h" << heads;
  if (heads_kv != heads) s << "/" << heads_kv;
  s << " d" << head_dim;
  if (head_dim_v != head_dim) s << "/" << head_dim_v;
  s << " " << dtype_name(dtype);
  if (causal) s << " causal";
  if (window.left >= 0 || window.right >= 0) s << " window(" << window.left << "," << window.right << ")";
  if (softcap > 0.f) s << " softcap" << softcap;
  if (alibi) s << " alibi";
  if (dropout > 0.f) s << " dropout" << dropout;
  if (sink) s << " sink";
  if (key_padding) s << " key-padding";
  if (varlen) s << " varlen";
  if (page_size > 0) s << " paged" << page_size;
  if (deterministic) s << " deterministic";
  return s.str();
}

HostProblem make_host_problem(const ProblemSpec& spec_in) {
  HostProblem p;
  p.spec = spec_in;
  p.spec.resolve();
  const ProblemSpec& s = p.spec;
  Rng rng(s.seed * 0x2545F4914F6CDD1Dull + 1);

  p.len_q.assign(s.batch, static_cast<std::int32_t>(s.seqlen_q));
  p.len_k.assign(s.batch, static_cast<std::int32_t>(s.seqlen_k));
  if (s.varlen) {
    // A length in [1, max] (0 when max is 0).
    auto draw = [&rng](std::int64_t max) {
      return static_cast<std::int32_t>(rng.uniform_int(std::min<std::int64_t>(1, max), max));
    };
    for (std::int64_t b = 0; b < s.batch; ++b) {
      p.len_q[b] = draw(s.seqlen_q);
      // Self-attention packing keeps q and k lengths equal; otherwise draw them apart.
      p.len_k[b] = s.seqlen_q == s.seqlen_k ? p.len_q[b] : draw(s.seqlen_k);
    }
  }
  p.cu_q = prefix_sums(p.len_q);
  p.cu_k = prefix_sums(p.len_k);
  p.rows_q = p.cu_q.back();
  p.rows_k = p.cu_k.back();

  p.q = random_operand(rng, s.dtype, p.rows_q * s.heads * s.head_dim);
  p.k = random_operand(rng, s.dtype, p.rows_k * s.heads_kv * s.head_dim);
  p.v = random_operand(rng, s.dtype, p.rows_k * s.heads_kv * s.head_dim_v);
  if (s.backward) p.dout = random_operand(rng, s.dtype, p.rows_q * s.heads * s.head_dim_v);

  if (s.alibi) {
    // The usual geometric slopes 2^(-8 (i + 1) / h).
    for (std::int64_t h = 0; h < s.heads; ++h) {
      p.alibi_slopes.push_back(std::exp2(-8.f * static_cast<float>(h + 1) / static_cast<float>(s.heads)));
    }
  }
  if (s.sink) {
    for (std::int64_t h = 0; h < s.heads; ++h) p.sink.push_back(rng.normal());
  }
  if (s.key_padding) {
    p.key_mask.assign(static_cast<std::size_t>(s.batch * s.seqlen_k), 1);
    for (std::int64_t b = 0; b < s.batch; ++b) {
      for (std::int64_t j = s.seqlen_k - s.seqlen_k / 4; j < s.seqlen_k; ++j)
        p.key_mask[b * s.seqlen_k + j] = 0;
    }
  }

  if (s.page_size > 0) {
    std::vector<std::int64_t> blocks_of(s.batch);
    for (std::int64_t b = 0; b < s.batch; ++b) {
      blocks_of[b] = (p.len_k[b] + s.page_size - 1) / s.page_size;
      p.num_blocks += blocks_of[b];
      p.max_blocks = std::max(p.max_blocks, blocks_of[b]);
    }
    p.max_blocks = std::max<std::int64_t>(p.max_blocks, 1);
    p.num_blocks = std::max<std::int64_t>(p.num_blocks, 1);
    // Pages handed out in a shuffled order, as a serving engine's allocator would.
    std::vector<std::int32_t> ids(p.num_blocks);
    std::iota(ids.begin(), ids.end(), 0);
    for (std::int64_t i = p.num_blocks - 1; i > 0; --i) std::swap(ids[i], ids[rng.uniform_int(0, i)]);
    p.block_table.assign(s.batch * p.max_blocks, 0);
    std::int64_t next = 0;
    for (std::int64_t b = 0; b < s.batch; ++b) {
      for (std::int64_t i = 0; i < blocks_of[b]; ++i) p.block_table[b * p.max_blocks + i] = ids[next++];
    }
    const auto element = static_cast<std::int64_t>(dtype_size(s.dtype));
    scatter_to_pages(p, p.k.values, s.heads_kv * s.head_dim * element, &p.k_paged);
    scatter_to_pages(p, p.v.values, s.heads_kv * s.head_dim_v * element, &p.v_paged);
  }
  return p;
}

double forward_flops(const HostProblem& p) {
  const ProblemSpec& s = p.spec;
  const bool windowed = s.window.left >= 0 || s.window.right >= 0;
  double pairs = 0.0;
  for (std::int64_t b = 0; b < s.batch; ++b) {
    const double sq = p.len_q[b];
    const double sk = p.len_k[b];
    if (!windowed) {
      pairs += s.causal ? sq * sk / 2.0 : sq * sk;
      continue;
    }
    const std::int64_t right = s.causal ? 0 : s.window.right;
    for (std::int64_t i = 0; i < p.len_q[b]; ++i) {
      const std::int64_t diagonal = i + p.len_k[b] - p.len_q[b];
      const std::int64_t lo = s.window.left < 0 ? 0 : std::max<std::int64_t>(0, diagonal - s.window.left);
      const std::int64_t hi =
          right < 0 ? p.len_k[b] - 1 : std::min<std::int64_t>(p.len_k[b] - 1, diagonal + right);
      pairs += static_cast<double>(std::max<std::int64_t>(0, hi - lo + 1));
    }
  }
  return 2.0 * pairs * static_cast<double>(s.heads) * static_cast<double>(s.head_dim + s.head_dim_v);
}

double problem_flops(const HostProblem& p) { return forward_flops(p) * (p.spec.backward ? 2.5 : 1.0); }

bool parse_dtype(const std::string& text, DType* dtype) {
  if (text == "fp16" || text == "float16" || text == "half") {
    *dtype = DType::float16;
  } else if (text == "bf16" || text == "bfloat16") {
    *dtype = DType::bfloat16;
  } else if (text == "fp32" || text == "float32" || text == "float") {
    *dtype = DType::float32;
  } else {
    return false;
  }
  return true;
}

bool parse_backend(const std::string& text, Backend* backend) {
  for (Backend b : {Backend::automatic, Backend::cpu_reference, Backend::cpu_tiled, Backend::cuda_sm80,
                    Backend::cuda_sm90}) {
    if (text == backend_name(b) || (b == Backend::automatic && text == "auto")) {
      *backend = b;
      return true;
    }
  }
  return false;
}

}  // namespace flashattn::cli
