#include <cstdint>
#include <cstdio>
#include <random>

#include "common/fast_division.h"
using namespace flashattn::detail;
static int div_sim(int n, FastDivisor f) {
  uint32_t hi = (uint32_t)(((uint64_t)((uint32_t)n << 1) * f.multiplier) >> 32);
  return (int)(hi >> f.shift);
}
int main() {
  std::mt19937_64 rng(1);
  long bad = 0, checked = 0;
  auto check = [&](int n, int d, FastDivisor f) {
    ++checked;
    if (div_sim(n, f) != n / d) {
      if (bad++ < 10) printf("bad n=%d d=%d\n", n, d);
    }
  };
  for (int d = 1; d <= 5000; ++d) {
    FastDivisor f = make_fast_divisor(d);
    for (int n = 0; n < 20000; ++n) check(n, d, f);
    for (int i = 0; i < 2000; ++i) check((int)(rng() & 0x7fffffff), d, f);
    check(0x7fffffff, d, f);
    check(0x7ffffffe, d, f);
    for (int k = 1; k < 40; ++k) {
      long long n = (long long)d * ((0x7fffffffLL / d) - k);
      if (n >= 0) {
        check((int)n, d, f);
        check((int)n - 1, d, f);
        check((int)n + d - 1, d, f);
      }
    }
  }
  for (int i = 0; i < 3000000; ++i) {
    int d = (int)(rng() % 0x7fffffff) + 1;
    if (i % 3 == 0) d = (int)(rng() % 100000) + 1;
    FastDivisor f = make_fast_divisor(d);
    int n = (int)(rng() & 0x7fffffff);
    check(n, d, f);
    long long q = n / d;
    check((int)(q * d), d, f);
    if (q * d + d - 1 <= 0x7fffffff) check((int)(q * d + d - 1), d, f);
  }
  for (int l = 0; l < 31; ++l) {
    int d = 1 << l;
    FastDivisor f = make_fast_divisor(d);
    for (int i = 0; i < 1000; ++i) check((int)(rng() & 0x7fffffff), d, f);
    check(0x7fffffff, d, f);
    if (d > 2) {
      FastDivisor g = make_fast_divisor(d + 1);
      for (int i = 0; i < 1000; ++i) check((int)(rng() & 0x7fffffff), d + 1, g);
      check(0x7fffffff, d + 1, g);
      g = make_fast_divisor(d - 1);
      for (int i = 0; i < 1000; ++i) check((int)(rng() & 0x7fffffff), d - 1, g);
      check(0x7fffffff, d - 1, g);
    }
  }
  printf("checked %ld, bad %ld\n", checked, bad);
  return bad != 0;
}
