// Division by launch constants for the tile decode: the shared implementation lives in
// common/fast_division.h (the sm80 paged K/V loader uses it too); these declarations keep
// the cuda_sm90 names.
#pragma once

#include "common/fast_division.h"

namespace flashattn::detail::cuda_sm90 {

using detail::FastDivisor;
using detail::make_fast_divisor;
#ifdef __CUDACC__
using detail::fast_divide;
#endif

}  // namespace flashattn::detail::cuda_sm90
