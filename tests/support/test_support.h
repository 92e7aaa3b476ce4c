// Shared machinery of the correctness suites: seeded randomness, host tensors
// with arbitrary strides, copies of them on the device of the backend under
// test, the list of backends to run, and the tolerance check against the
// float64 reference.
//
// Every suite follows one pattern:
//   1. build HostTensors (inputs random, outputs poisoned with NaN);
//   2. bind them to the backend under test (DeviceBinding: cudaMalloc'd copies for
//      CUDA backends, separate host copies for CPU ones) and call the public API;
//   3. bind them to the reference (ReferenceBinding: fp32 host copies) and call the
//      public API with Backend::cpu_reference -> ref; run the reference's precision
//      emulation -> ref_lowp (oracle.h);
//   4. expect_close(): max|out - ref| <= 2 * max|ref_lowp - ref| + atol, poisoned
//      elements overwritten, padding and inputs untouched.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "flashattn/flashattn.h"

#if FLASHATTN_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace flashattn::test {

// ----------------------------------------------------------------------------
// Randomness. One base seed per process: FLASHATTN_TEST_SEED if set, else fresh
// from std::random_device. Each test derives its own stream from the base seed
// and its full name, so a failure reproduces with
//   FLASHATTN_TEST_SEED=<seed> flashattn_tests --gtest_filter=<test>
std::uint64_t base_seed();

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  // The seed of the current test (base seed mixed with the test's full name).
  static Rng for_current_test();

  float normal() { return normal_(engine_); }
  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(engine_); }
  // Uniform integer in [lo, hi] (inclusive).
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(engine_);
  }
  bool coin(double p_true = 0.5) { return std::bernoulli_distribution(p_true)(engine_); }
  std::uint64_t bits() { return engine_(); }
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
  std::normal_distribution<float> normal_{0.f, 1.f};
};

// Text for SCOPED_TRACE naming how to reproduce the current test.
std::string seed_trace();

// ----------------------------------------------------------------------------
// Backends under test.

// cpu_tiled always; cuda_sm80 and cuda_sm90 (each skips at run time when absent).
std::vector<Backend> backends_under_test();
// Why `backend` cannot run here ("built without CUDA", "no CUDA device", ...), or nullopt.
std::optional<std::string> backend_unavailable_reason(Backend backend);
Device device_of(Backend backend);
bool is_cuda(Backend backend);

// Skips the current test when the backend cannot run here. Use at the top of a TEST_P body.
#define FLASHATTN_SKIP_IF_UNAVAILABLE(backend)                                   \
  do {                                                                           \
    if (auto reason_ = ::flashattn::test::backend_unavailable_reason(backend)) { \
      GTEST_SKIP() << ::flashattn::backend_name(backend) << ": " << *reason_;    \
    }                                                                            \
  } while (0)

// ----------------------------------------------------------------------------
// Host tensors.

// How a tensor's elements are laid out in memory. Only the last dim is ever
// contiguous-required; the others may be padded or permuted.
enum class Layout {
  contiguous,
  padded,       // every stride but the last padded by a multiple of 8 elements
  heads_major,  // (.., s, h, d) stored as (.., h, s, d), and padded
};
const char* layout_name(Layout layout);

class HostTensor {
 public:
  // Elements kept on each side of the view so out-of-bounds writes are seen.
  static constexpr std::int64_t kGuard = 64;

  HostTensor() = default;
  HostTensor(DType dtype, std::vector<std::int64_t> shape, Layout layout = Layout::contiguous);
  HostTensor(DType dtype, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides);

  bool defined() const { return !shape_.empty(); }
  DType dtype() const { return dtype_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  const std::vector<std::int64_t>& strides() const { return strides_; }
  std::int64_t size(int dim) const { return shape_[dim]; }
  std::int64_t numel() const;
  Layout layout() const { return layout_; }

  // Element offset (from the view's origin) of a logical index.
  std::int64_t offset(const std::int64_t* index) const;
  std::int64_t offset(std::initializer_list<std::int64_t> index) const { return offset(index.begin()); }

  float get(const std::int64_t* index) const;
  float get(std::initializer_list<std::int64_t> index) const { return get(index.begin()); }
  void set(const std::int64_t* index, float value);  // rounds to dtype
  void set(std::initializer_list<std::int64_t> index, float value) { set(index.begin(), value); }
  std::int32_t get_int(std::initializer_list<std::int64_t> index) const;
  void set_int(std::initializer_list<std::int64_t> index, std::int32_t value);

  // Bytes of the whole allocation (guards and padding included) and of the view origin.
  std::byte* storage() { return storage_.data(); }
  const std::byte* storage() const { return storage_.data(); }
  std::size_t storage_bytes() const { return storage_.size(); }
  std::size_t origin_byte_offset() const;

  // Fills every storage element (guards, padding and the view) with NaN of a fixed payload.
  void poison();
  // Fills the view with N(0, stddev) (rounded to dtype, never exactly zero); padding and guards with NaN.
  void fill_normal(Rng& rng, float stddev = 1.f);
  void fill_uniform(Rng& rng, float lo, float hi);
  void fill_int(std::int32_t value);
  // Poisons the elements whose first index lies in [first, first + count) (rows nobody may read).
  void poison_leading(std::int64_t first, std::int64_t count);

  // A view of this tensor's elements at `base` (which holds a copy of storage()).
  TensorView view_at(void* base, Device device) const;
  TensorView view() { return view_at(storage_.data(), Device{}); }

  // Contiguous copy with every element converted to `dtype` (int32 tensors stay int32).
  HostTensor converted(DType dtype) const;

  // Calls fn(index) for every logical index in row-major order.
  void for_each_index(const std::function<void(const std::int64_t*)>& fn) const;

 private:
  DType dtype_ = DType::float32;
  Layout layout_ = Layout::contiguous;
  std::vector<std::int64_t> shape_, strides_;
  std::int64_t span_ = 0;  // elements from the origin to one past the last element
  std::vector<std::byte> storage_;
};

// True when the two tensors' storages are bitwise identical.
bool bitwise_equal(const HostTensor& a, const HostTensor& b);

// ----------------------------------------------------------------------------
// Memory on a backend's device.

#if FLASHATTN_WITH_CUDA
// Throws std::runtime_error naming `what` and the error where `error` is not cudaSuccess.
void check_cuda(cudaError_t error, const char* what);
#endif

class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(Backend backend, std::size_t bytes);
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&& other) noexcept;
  DeviceMemory& operator=(DeviceMemory&& other) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* host, std::size_t bytes);
  // `bytes` from byte `offset` of this memory.
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const;

 private:
  void release() noexcept;
  bool cuda_ = false;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// A stream to launch on (a non-blocking cudaStream_t for CUDA backends, null on the CPU).
class Stream {
 public:
  explicit Stream(Backend backend);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  void* get() const { return stream_; }
  // Waits for the stream and checks for asynchronous CUDA errors.
  void synchronize() const;

 private:
  void* stream_ = nullptr;
};

// ----------------------------------------------------------------------------
// Bindings: where the tensors of one call live.

class Binding {
 public:
  virtual ~Binding() = default;
  // The view the API gets for t; an undefined tensor gives an undefined view.
  virtual TensorView view(const HostTensor& t) = 0;
};

// Copies on the backend's device, byte for byte (padding, guards and poison included).
class DeviceBinding final : public Binding {
 public:
  explicit DeviceBinding(Backend backend) : backend_(backend) {}
  TensorView view(const HostTensor& t) override;
  // The device copy of t, brought back (same layout as t).
  HostTensor fetch(const HostTensor& t) const;

 private:
  Backend backend_;
  std::map<const HostTensor*, DeviceMemory> copies_;
};

// Contiguous host copies converted to `dtype` (nullopt: kept; int32 and bool tensors always kept),
// for the reference.
class ReferenceBinding final : public Binding {
 public:
  explicit ReferenceBinding(std::optional<DType> dtype) : dtype_(dtype) {}
  TensorView view(const HostTensor& t) override;
  // The reference's copy of t (contiguous, dtype of the binding).
  const HostTensor& result(const HostTensor& t) const;

 private:
  std::optional<DType> dtype_;
  std::map<const HostTensor*, std::unique_ptr<HostTensor>> copies_;
};

// ----------------------------------------------------------------------------
// Calling the API on a backend: workspace from workspace_size(), stream, sync.

// Runs the operation on `backend`: a workspace of exactly workspace_size() bytes
// on its device, a fresh stream, then waits and checks for asynchronous errors.
Status run_on(Backend backend, const ForwardArgs& args, int num_threads = 0);
Status run_on(Backend backend, const VarlenForwardArgs& args, int num_threads = 0);
Status run_on(Backend backend, const KVCacheForwardArgs& args, int num_threads = 0);
Status run_on(Backend backend, const BackwardArgs& args, int num_threads = 0);
Status run_on(Backend backend, const VarlenBackwardArgs& args, int num_threads = 0);
Status run_on(Backend backend, const CombineArgs& args, int num_threads = 0);

// The calls in order on one stream of `backend` with one workspace (garbage-filled, sized for the largest of
// them) and no synchronisation between them, as an engine that keeps its workspace issues them; then waits.
// The first failing status, or ok.
Status run_back_to_back(Backend backend, const std::vector<VarlenForwardArgs>& calls);

// ----------------------------------------------------------------------------
// Tolerance checks.

// Which logical elements the call must write; the others must keep their poison.
using ElementFilter = std::function<bool(const std::int64_t* index)>;

struct Tolerance {
  double factor = 2.0;  // on max|ref_lowp - ref|
  double atol = 0.0;
  // Units in the last place of the output's dtype at max|ref| added to the bound (see expect_close).
  double output_ulps = 0.0;
};

// Per-dtype absolute tolerances on top of the 2x rule, in units of the
// reference's largest magnitude (never below 1): fp32 rounding noise of the
// accumulations the backends do in fp32 whatever the input dtype.
double output_atol(DType dtype);
// LSE is fp32 on every path; absolute on the log scale.
inline constexpr double kLseAtol = 1e-4;

// max|actual - ref| <= factor * max|ref_lowp - ref| + atol * max(1, max|ref|)
// + output_ulps * ulp(actual's dtype at max|ref|) over written elements; infinities must match exactly; no
// NaN; unwritten elements, padding and guards bitwise equal to `before` (the poisoned tensor as it was before
// the call).
::testing::AssertionResult expect_close(const std::string& what, const HostTensor& actual,
                                        const HostTensor& before, const HostTensor& ref,
                                        const HostTensor& ref_lowp, Tolerance tol,
                                        const ElementFilter& written = {});

// Every storage byte of `after` equals `before` (inputs must not change).
::testing::AssertionResult expect_unchanged(const std::string& what, const HostTensor& before,
                                            const HostTensor& after);

// expect_unchanged for each named input against its device copy.
using NamedTensors = std::initializer_list<std::pair<const char*, const HostTensor*>>;
void expect_inputs_unchanged(const DeviceBinding& device, NamedTensors inputs);

// Exact elementwise equality of logical elements (for bitwise determinism / exact copies).
::testing::AssertionResult expect_identical(const std::string& what, const HostTensor& a,
                                            const HostTensor& b);

// ----------------------------------------------------------------------------
// Small helpers for case tables.

std::string dtype_label(DType dtype);
// gtest parameter names allow only [A-Za-z0-9_].
std::string sanitize_name(std::string name);

}  // namespace flashattn::test
