// The sm90 tile decode divides by launch constants with a multiply-high and a shift
// (src/common/fast_division.h). Its exactness proof covers 0 <= n < 2^31 and
// 1 <= d < 2^31; this checks the host constants against `/` on the edges of that range
// (every divisor's multiples, powers of two, the largest values) and on random pairs.
// On the host: fast_divide's host branch computes the bits of the device's __umulhi(2n, m) >> shift.
#include "common/fast_division.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace flashattn::test {
namespace {

using detail::make_fast_divisor;

::testing::AssertionResult divides_exactly(std::int64_t n, int d) {
  const int got = detail::fast_divide(static_cast<int>(n), make_fast_divisor(d));
  if (got == n / d) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << n << " / " << d << ": got " << got << ", expected " << n / d;
}

TEST(FastDivision, MatchesIntegerDivisionAtTheEdges) {
  constexpr std::int64_t kMaxN = 0x7fffffff;
  std::vector<int> divisors;
  for (int d = 1; d <= 300; ++d) divisors.push_back(d);
  for (int bit = 9; bit < 31; ++bit) {
    for (int delta : {-1, 0, 1}) divisors.push_back((1 << bit) + delta);
  }
  divisors.push_back(0x7fffffff);
  for (int d : divisors) {
    for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, kMaxN - 1, kMaxN})
      ASSERT_TRUE(divides_exactly(n, d));
    // Around the largest multiples of d (where the rounding of m would show first) and the smallest.
    for (std::int64_t q : {kMaxN / d, kMaxN / d - 1, std::int64_t{1}, std::int64_t{2}}) {
      for (std::int64_t n : {q * d - 1, q * d, q * d + 1}) {
        if (n >= 0 && n <= kMaxN) {
          ASSERT_TRUE(divides_exactly(n, d));
        }
      }
    }
  }
}

TEST(FastDivision, MatchesIntegerDivisionOnRandomPairs) {
  std::mt19937_64 rng(20261122);
  for (int i = 0; i < 1000000; ++i) {
    const auto n = static_cast<std::int64_t>(rng() & 0x7fffffff);
    // Divisors spread over every magnitude: a random bit length, then random bits below it.
    const int bits = 1 + static_cast<int>(rng() % 31);
    const int d = static_cast<int>(std::max<std::uint64_t>(1, rng() & ((std::uint64_t{1} << bits) - 1)));
    ASSERT_TRUE(divides_exactly(n, d));
  }
}

}  // namespace
}  // namespace flashattn::test
