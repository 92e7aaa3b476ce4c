// options.bias on the CPU tiled backend's score tiles (forward and backward share it).
#include <cstdint>
#include <limits>

#include "common/numeric.h"
#include "cpu/tiled.h"

namespace flashattn::detail::cpu_tiled {

void add_score_bias(const AttentionParams& p, std::int64_t b, const std::int64_t* query,
                    const std::int64_t* head, std::int64_t rows, std::int64_t j0, int cols, float* s,
                    std::int64_t ld) noexcept {
  const bool mask = p.bias_dtype == DType::boolean;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t row = bias_row_offset(p, b, head[r], query[r]) + j0;
    for (int jj = 0; jj < cols; ++jj) {
      const float bias = load_float(p.bias, p.bias_dtype, row + jj);
      float& score = s[jj * ld + r];
      if (!mask) {
        score += bias;
      } else if (bias == 0.f) {
        score = -std::numeric_limits<float>::infinity();
      }
    }
  }
}

}  // namespace flashattn::detail::cpu_tiled
