// The polynomial 2^x of the sm90 forward softmax (src/cuda/sm90/exp2_poly.h), checked on the
// host: the header computes the same bits on host and device (its comment says why), so the
// stated error bounds are checked here for the arithmetic the kernels run. Over the range the
// softmax feeds it (x = s * scale - reference max: <= 0, or up to 8 above with conditional
// rescaling, down to -inf for masked scores) and beyond, on both ends.
#include "cuda/sm90/exp2_poly.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>

namespace flashattn::detail {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

template <int kDegree>
void check_point(float x, double& worst) {
  const float y = exp2_poly<kDegree>(x);
  const double exact = std::exp2(static_cast<double>(x));
  if (x <= kExp2PolyLowest) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(y), 0u) << "x = " << x << ": expected +0, got " << y;
  } else if (x < -126.f) {
    // Subnormal results: absolute error below 2^-127, never negative.
    ASSERT_GE(y, 0.f) << "x = " << x;
    ASSERT_LT(std::abs(y - exact), std::ldexp(1.0, -127)) << "x = " << x;
  } else {
    const double rel = std::abs(y / exact - 1.0);
    if (rel > worst) worst = rel;
    ASSERT_LE(rel, Exp2Poly<kDegree>::kMaxRelativeError)
        << "x = " << x << " y = " << y << " exact = " << exact;
  }
}

template <int kDegree>
void check_degree() {
  double worst = 0;
  // Every float of [0, 1) (the reduced argument; the relative error depends on f only,
  // j is applied exactly): 2^30 of them is too many for a unit test, so every 64th bit
  // pattern, plus a dense stride of the whole working range below.
  for (std::uint32_t bits = 0; bits < std::bit_cast<std::uint32_t>(1.f); bits += 64) {
    check_point<kDegree>(std::bit_cast<float>(bits), worst);
    if (testing::Test::HasFatalFailure()) return;
  }
  // x = k / 4096 over [-130, 10): the working range (<= 8) with margin, each integer's
  // neighbourhood included.
  for (int k = -130 * 4096; k < 10 * 4096; ++k) {
    check_point<kDegree>(static_cast<float>(k) / 4096.f, worst);
    if (testing::Test::HasFatalFailure()) return;
  }
  // Random floats of the range and the floats next to each integer (f just below 1 / at 0).
  std::mt19937 gen(12345);
  std::uniform_real_distribution<float> dist(-140.f, 9.f);
  for (int i = 0; i < 1 << 20; ++i) {
    check_point<kDegree>(dist(gen), worst);
    if (testing::Test::HasFatalFailure()) return;
  }
  for (int j = -128; j <= 9; ++j) {
    const float x = static_cast<float>(j);
    for (float y : {x, std::nextafter(x, -kInf), std::nextafter(x, kInf)}) check_point<kDegree>(y, worst);
  }
  // The masked path and everything below the clamp: exactly +0, as ex2.approx gives.
  for (float x :
       {-kInf, -std::numeric_limits<float>::max(), -1e30f, -1000.f, -200.f, -128.f, -127.5f, -127.f}) {
    check_point<kDegree>(x, worst);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(exp2_poly<kDegree>(x)), 0u) << x;
  }
  // Exact at integers (p(0) = 1): the row's maximum score gives exactly 1.
  for (int j = -126; j <= 9; ++j)
    EXPECT_EQ(exp2_poly<kDegree>(static_cast<float>(j)), std::ldexp(1.f, j)) << j;
  // The bound is tight: the measured worst case is within 5% of the stated one.
  EXPECT_GT(worst, 0.95 * Exp2Poly<kDegree>::kMaxRelativeError);
  std::printf("exp2_poly degree %d: worst relative error %.3e (bound %.1e)\n", kDegree, worst,
              Exp2Poly<kDegree>::kMaxRelativeError);
}

TEST(Exp2Poly, Degree3WithinBound) { check_degree<3>(); }
TEST(Exp2Poly, Degree4WithinBound) { check_degree<4>(); }

// Degree 3 serves bf16, degree 4 fp16 (forward_config.h): each must stay well under half a
// unit in the last place of the type P is rounded to.
TEST(Exp2Poly, BoundsAreWellUnderHalfUlp) {
  EXPECT_LT(Exp2Poly<3>::kMaxRelativeError, std::ldexp(1.0, -9) / 16);   // bf16: 8 significant bits
  EXPECT_LT(Exp2Poly<4>::kMaxRelativeError, std::ldexp(1.0, -12) / 16);  // fp16: 11
}

}  // namespace
}  // namespace flashattn::detail
