// The oracle of every correctness suite, built on the CPU reference backend.
//
//   ref      = the public API with Backend::cpu_reference on float32 copies of the
//              inputs: float64 math, results rounded once to fp32 (inputs of fp16/bf16
//              are exact in fp32, so this is the float64 result of the same problem).
//   ref_lowp = the reference's precision emulation (cpu_reference::run_emulated) on
//              copies in the inputs' own dtype: the same math in float with the
//              roundings a low-precision implementation makes.
// A backend passes when max|out - ref| <= 2 * max|ref_lowp - ref| + atol.
//
// Both take the same `build` callable the backend under test gets: it turns a
// Binding into the operation's Args, so the three calls cannot drift apart.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "support/test_support.h"

namespace flashattn::test {

// run_emulated on host tensors, params from the API's own validation.
Status run_reference_emulated(const ForwardArgs& args, DType precision);
Status run_reference_emulated(const VarlenForwardArgs& args, DType precision);
Status run_reference_emulated(const KVCacheForwardArgs& args, DType precision);
Status run_reference_emulated(const BackwardArgs& args, DType precision);
Status run_reference_emulated(const VarlenBackwardArgs& args, DType precision);

// ref: float64 reference on float32 copies of every tensor build() binds.
template <class Build>
ReferenceBinding reference(Build&& build) {
  ReferenceBinding binding(DType::float32);
  const auto args = build(static_cast<Binding&>(binding));
  if (Status status = run_on(Backend::cpu_reference, args); !status.ok()) {
    throw std::runtime_error(std::string("cpu_reference failed: ") + status.message());
  }
  return binding;
}

// ref_lowp: the reference's emulation of `precision` on copies in the original dtypes.
template <class Build>
ReferenceBinding reference_lowp(Build&& build, DType precision) {
  ReferenceBinding binding(std::nullopt);
  const auto args = build(static_cast<Binding&>(binding));
  if (Status status = run_reference_emulated(args, precision); !status.ok()) {
    throw std::runtime_error(std::string("cpu_reference::run_emulated failed: ") + status.message());
  }
  return binding;
}

}  // namespace flashattn::test
