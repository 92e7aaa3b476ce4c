#include "support/test_support.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>
#include <stdexcept>

#include "common/numeric.h"

#if FLASHATTN_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace flashattn::test {

// ----------------------------------------------------------------------------
// Randomness.

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 0xCBF29CE484222325ull;
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001B3ull;
  return hash;
}

std::string current_test_name() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (!info) return "";
  return std::string(info->test_suite_name()) + "." + info->name();
}

}  // namespace

std::uint64_t base_seed() {
  static const std::uint64_t seed = [] {
    if (const char* text = std::getenv("FLASHATTN_TEST_SEED"); text && *text) {
      return static_cast<std::uint64_t>(std::strtoull(text, nullptr, 0));
    }
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }();
  return seed;
}

namespace {

// Prints the base seed once per run, so a CI log names it even when every test passes.
class SeedEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { std::printf("flashattn tests: FLASHATTN_TEST_SEED=%" PRIu64 "\n", base_seed()); }
};
[[maybe_unused]] ::testing::Environment* const seed_environment =
    ::testing::AddGlobalTestEnvironment(new SeedEnvironment);

}  // namespace

Rng Rng::for_current_test() { return Rng(splitmix64(base_seed() ^ fnv1a(current_test_name()))); }

std::string seed_trace() {
  return "reproduce with FLASHATTN_TEST_SEED=" + std::to_string(base_seed()) +
         " --gtest_filter=" + current_test_name();
}

// ----------------------------------------------------------------------------
// Backends.

std::vector<Backend> backends_under_test() {
  return {Backend::cpu_tiled, Backend::cuda_sm80, Backend::cuda_sm90};
}

bool is_cuda(Backend backend) { return backend == Backend::cuda_sm80 || backend == Backend::cuda_sm90; }

Device device_of(Backend backend) {
  return is_cuda(backend) ? Device{DeviceType::cuda, 0} : Device{DeviceType::cpu, 0};
}

std::optional<std::string> backend_unavailable_reason(Backend backend) {
  if (!backend_compiled(backend)) {
    return FLASHATTN_WITH_CUDA ? std::string("backend not compiled into this build")
                               : std::string("built without CUDA");
  }
  if (!is_cuda(backend)) return std::nullopt;
  if (cuda_device_count() <= 0) return std::string("no CUDA device");
  CudaDeviceInfo info;
  if (Status status = cuda_device_info(0, &info); !status.ok()) {
    return std::string("cuda_device_info failed: ") + status.message();
  }
  const int cc = info.compute_capability;
  if (backend == Backend::cuda_sm80 && cc < 80) {
    return "device 0 (" + std::string(info.name) + ") has compute capability " + std::to_string(cc) + " < 80";
  }
  if (backend == Backend::cuda_sm90 && cc != 90) {
    return "device 0 (" + std::string(info.name) + ") has compute capability " + std::to_string(cc) +
           ", sm_90a kernels need 90";
  }
  return std::nullopt;
}

// ----------------------------------------------------------------------------
// Host tensors.

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::contiguous:
      return "contig";
    case Layout::padded:
      return "padded";
    case Layout::heads_major:
      return "headsmajor";
  }
  return "?";
}

namespace {

// Storage order innermost-first; heads_major swaps the two dims before the last.
std::vector<std::int64_t> layout_strides(const std::vector<std::int64_t>& shape, Layout layout) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int> order;  // innermost first
  for (int i = rank - 1; i >= 0; --i) order.push_back(i);
  if (layout == Layout::heads_major && rank >= 3) std::swap(order[1], order[2]);
  std::vector<std::int64_t> strides(rank, 1);
  std::int64_t extent = 1;
  for (int k = 0; k < rank; ++k) {
    const std::int64_t pad = (layout == Layout::contiguous || k == 0) ? 0 : 8 * k;
    strides[order[k]] = extent + pad;
    if (k == 0) strides[order[k]] = 1;
    extent = strides[order[k]] * std::max<std::int64_t>(shape[order[k]], 1);
  }
  return strides;
}

// NaN payloads that no computation produces, so "untouched" can be checked bitwise.
void write_poison(std::byte* p, DType dtype) {
  switch (dtype) {
    case DType::float16: {
      const std::uint16_t bits = 0x7E5Au;
      std::memcpy(p, &bits, 2);
      return;
    }
    case DType::bfloat16: {
      const std::uint16_t bits = 0x7FDAu;
      std::memcpy(p, &bits, 2);
      return;
    }
    case DType::float32:
    case DType::int32: {
      const std::uint32_t bits = 0x7FC0F00Du;
      std::memcpy(p, &bits, 4);
      return;
    }
    case DType::boolean:
      *p = std::byte{0xA5};  // neither 0 nor 1
      return;
  }
}

}  // namespace

HostTensor::HostTensor(DType dtype, std::vector<std::int64_t> shape, Layout layout)
    : HostTensor(dtype, shape, layout_strides(shape, layout)) {
  layout_ = layout;
}

HostTensor::HostTensor(DType dtype, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides)
    : dtype_(dtype), shape_(std::move(shape)), strides_(std::move(strides)) {
  if (shape_.size() != strides_.size() || shape_.empty() || shape_.size() > kMaxRank) {
    throw std::invalid_argument("HostTensor: bad rank");
  }
  span_ = numel() > 0 ? 1 : 0;
  if (span_) {
    for (std::size_t i = 0; i < shape_.size(); ++i) span_ += (shape_[i] - 1) * strides_[i];
  }
  storage_.resize(static_cast<std::size_t>(span_ + 2 * kGuard) * dtype_size(dtype_));
  poison();
}

std::int64_t HostTensor::numel() const {
  std::int64_t n = 1;
  for (std::int64_t s : shape_) n *= s;
  return shape_.empty() ? 0 : n;
}

std::int64_t HostTensor::offset(const std::int64_t* index) const {
  std::int64_t off = 0;
  for (std::size_t i = 0; i < shape_.size(); ++i) off += index[i] * strides_[i];
  return off;
}

std::size_t HostTensor::origin_byte_offset() const { return kGuard * dtype_size(dtype_); }

float HostTensor::get(const std::int64_t* index) const {
  return detail::load_float(storage_.data() + origin_byte_offset(), dtype_, offset(index));
}

void HostTensor::set(const std::int64_t* index, float value) {
  detail::store_float(storage_.data() + origin_byte_offset(), dtype_, offset(index), value);
}

std::int32_t HostTensor::get_int(std::initializer_list<std::int64_t> index) const {
  std::int32_t v;
  std::memcpy(&v, storage_.data() + origin_byte_offset() + offset(index.begin()) * 4, 4);
  return v;
}

void HostTensor::set_int(std::initializer_list<std::int64_t> index, std::int32_t value) {
  std::memcpy(storage_.data() + origin_byte_offset() + offset(index.begin()) * 4, &value, 4);
}

void HostTensor::poison() {
  const std::size_t size = dtype_size(dtype_);
  for (std::size_t i = 0; i < storage_.size(); i += size) write_poison(storage_.data() + i, dtype_);
}

void HostTensor::fill_normal(Rng& rng, float stddev) {
  for_each_index([&](const std::int64_t* index) {
    float value;
    do value = detail::round_to(dtype_, rng.normal() * stddev);
    while (value == 0.f);
    set(index, value);
  });
}

void HostTensor::fill_uniform(Rng& rng, float lo, float hi) {
  for_each_index([&](const std::int64_t* index) { set(index, rng.uniform(lo, hi)); });
}

void HostTensor::fill_int(std::int32_t value) {
  for_each_index([&](const std::int64_t* index) {
    std::memcpy(storage_.data() + origin_byte_offset() + offset(index) * 4, &value, 4);
  });
}

void HostTensor::poison_leading(std::int64_t first, std::int64_t count) {
  const std::size_t size = dtype_size(dtype_);
  for_each_index([&](const std::int64_t* index) {
    if (index[0] >= first && index[0] < first + count) {
      write_poison(storage_.data() + origin_byte_offset() + offset(index) * size, dtype_);
    }
  });
}

TensorView HostTensor::view_at(void* base, Device device) const {
  TensorView v;
  v.data = static_cast<std::byte*>(base) + origin_byte_offset();
  v.dtype = dtype_;
  v.rank = rank();
  for (int i = 0; i < rank(); ++i) {
    v.shape[i] = shape_[i];
    v.stride[i] = strides_[i];
  }
  v.device = device;
  return v;
}

HostTensor HostTensor::converted(DType dtype) const {
  // Index tensors and masks keep their dtype: a mask is not a number to convert.
  const bool kept = dtype_ == DType::int32 || dtype_ == DType::boolean;
  const DType target = kept ? dtype_ : dtype;
  HostTensor copy(target, shape_, Layout::contiguous);
  for_each_index([&](const std::int64_t* index) {
    if (kept) {
      const std::size_t size = dtype_size(target);
      std::memcpy(copy.storage_.data() + copy.origin_byte_offset() + copy.offset(index) * size,
                  storage_.data() + origin_byte_offset() + offset(index) * size, size);
    } else {
      copy.set(index, get(index));
    }
  });
  return copy;
}

void HostTensor::for_each_index(const std::function<void(const std::int64_t*)>& fn) const {
  if (numel() == 0) return;
  std::vector<std::int64_t> index(shape_.size(), 0);
  while (true) {
    fn(index.data());
    int dim = rank() - 1;
    while (dim >= 0 && ++index[dim] == shape_[dim]) index[dim--] = 0;
    if (dim < 0) return;
  }
}

bool bitwise_equal(const HostTensor& a, const HostTensor& b) {
  return a.storage_bytes() == b.storage_bytes() &&
         std::memcmp(a.storage(), b.storage(), a.storage_bytes()) == 0;
}

// ----------------------------------------------------------------------------
// Device memory.

#if FLASHATTN_WITH_CUDA
void check_cuda(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorName(error) + ": " +
                             cudaGetErrorString(error));
  }
}
#endif

DeviceMemory::DeviceMemory(Backend backend, std::size_t bytes) : cuda_(is_cuda(backend)), bytes_(bytes) {
  const std::size_t allocated = std::max<std::size_t>(bytes, 1);
  if (cuda_) {
#if FLASHATTN_WITH_CUDA
    check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
    check_cuda(cudaMalloc(&data_, allocated), "cudaMalloc");
#else
    throw std::runtime_error("DeviceMemory: CUDA backend in a build without CUDA");
#endif
  } else {
    // 256-byte alignment, as the API promises for workspaces and as GPU allocations give.
    data_ = ::operator new (allocated, std::align_val_t{256});
  }
}

DeviceMemory::~DeviceMemory() { release(); }

DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : cuda_(other.cuda_), data_(other.data_), bytes_(other.bytes_) {
  other.data_ = nullptr;
  other.bytes_ = 0;
}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
  if (this != &other) {
    release();
    cuda_ = other.cuda_;
    data_ = other.data_;
    bytes_ = other.bytes_;
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

void DeviceMemory::release() noexcept {
  if (!data_) return;
  if (cuda_) {
#if FLASHATTN_WITH_CUDA
    cudaFree(data_);  // a failure here would only hide the test's real error
#endif
  } else {
    ::operator delete (data_, std::align_val_t{256});
  }
  data_ = nullptr;
}

void DeviceMemory::upload(const void* host, std::size_t bytes) {
  if (bytes > bytes_) throw std::runtime_error("DeviceMemory::upload: too many bytes");
  if (cuda_) {
#if FLASHATTN_WITH_CUDA
    check_cuda(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy(host to device)");
    // Pageable copies may still be in flight when cudaMemcpy returns; the kernels
    // run on a non-blocking stream that would not wait for them.
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize after upload");
#endif
  } else {
    std::memcpy(data_, host, bytes);
  }
}

void DeviceMemory::download(void* host, std::size_t bytes, std::size_t offset) const {
  if (offset > bytes_ || bytes > bytes_ - offset)
    throw std::runtime_error("DeviceMemory::download: too many bytes");
  const auto* source = static_cast<const std::byte*>(data_) + offset;
  if (cuda_) {
#if FLASHATTN_WITH_CUDA
    check_cuda(cudaMemcpy(host, source, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(device to host)");
#endif
  } else {
    std::memcpy(host, source, bytes);
  }
}

Stream::Stream(Backend backend) {
  if (!is_cuda(backend)) return;
#if FLASHATTN_WITH_CUDA
  cudaStream_t stream = nullptr;
  check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  stream_ = stream;
#endif
}

Stream::~Stream() {
#if FLASHATTN_WITH_CUDA
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
#endif
}

void Stream::synchronize() const {
#if FLASHATTN_WITH_CUDA
  if (!stream_) return;
  check_cuda(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
  check_cuda(cudaGetLastError(), "kernel launch (cudaGetLastError)");
#endif
}

// ----------------------------------------------------------------------------
// Bindings.

TensorView DeviceBinding::view(const HostTensor& t) {
  if (!t.defined()) return TensorView{};
  auto it = copies_.find(&t);
  if (it == copies_.end()) {
    DeviceMemory memory(backend_, t.storage_bytes());
    memory.upload(t.storage(), t.storage_bytes());
    it = copies_.emplace(&t, std::move(memory)).first;
  }
  return t.view_at(it->second.data(), device_of(backend_));
}

HostTensor DeviceBinding::fetch(const HostTensor& t) const {
  auto it = copies_.find(&t);
  if (it == copies_.end()) throw std::logic_error("DeviceBinding::fetch: tensor was never bound");
  HostTensor copy = t;
  it->second.download(copy.storage(), copy.storage_bytes());
  return copy;
}

TensorView ReferenceBinding::view(const HostTensor& t) {
  if (!t.defined()) return TensorView{};
  auto it = copies_.find(&t);
  if (it == copies_.end()) {
    it = copies_.emplace(&t, std::make_unique<HostTensor>(t.converted(dtype_.value_or(t.dtype())))).first;
  }
  return it->second->view();
}

const HostTensor& ReferenceBinding::result(const HostTensor& t) const {
  auto it = copies_.find(&t);
  if (it == copies_.end()) throw std::logic_error("ReferenceBinding::result: tensor was never bound");
  return *it->second;
}

// ----------------------------------------------------------------------------
// Running an operation.

namespace {

Status call_api(const ForwardArgs& a, const ExecutionContext& c) { return forward(a, c); }
Status call_api(const VarlenForwardArgs& a, const ExecutionContext& c) { return forward_varlen(a, c); }
Status call_api(const KVCacheForwardArgs& a, const ExecutionContext& c) { return forward_kvcache(a, c); }
Status call_api(const BackwardArgs& a, const ExecutionContext& c) { return backward(a, c); }
Status call_api(const VarlenBackwardArgs& a, const ExecutionContext& c) { return backward_varlen(a, c); }
Status call_api(const CombineArgs& a, const ExecutionContext& c) { return combine(a, c); }

// The calls in order on one fresh stream with one workspace of the largest workspace_size() among them, then
// a wait (which checks for asynchronous errors); the first failing status, or ok.
template <class Args>
Status run_in_order(Backend backend, const Args* calls, std::size_t count, int num_threads) {
  ExecutionContext ctx;
  ctx.backend = backend;
  ctx.num_threads = num_threads;
  Stream stream(backend);
  ctx.stream = stream.get();
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t needed = 0;
    FLASHATTN_RETURN_IF_ERROR(workspace_size(calls[i], ctx, &needed));
    bytes = std::max(bytes, needed);
  }
  DeviceMemory workspace;
  if (bytes > 0) {
    workspace = DeviceMemory(backend, bytes);
    // Garbage, not zeros: a backend must not rely on the workspace's contents.
    std::vector<std::byte> garbage(bytes, std::byte{0xFF});
    workspace.upload(garbage.data(), bytes);
    ctx.workspace = workspace.data();
    ctx.workspace_bytes = bytes;
  }
  Status status = Status::ok_status();
  for (std::size_t i = 0; i < count && status.ok(); ++i) status = call_api(calls[i], ctx);
  stream.synchronize();
  return status;
}

template <class Args>
Status run_impl(Backend backend, const Args& args, int num_threads) {
  return run_in_order(backend, &args, 1, num_threads);
}

}  // namespace

Status run_back_to_back(Backend backend, const std::vector<VarlenForwardArgs>& calls) {
  return run_in_order(backend, calls.data(), calls.size(), 0);
}

Status run_on(Backend b, const ForwardArgs& a, int t) { return run_impl(b, a, t); }
Status run_on(Backend b, const VarlenForwardArgs& a, int t) { return run_impl(b, a, t); }
Status run_on(Backend b, const KVCacheForwardArgs& a, int t) { return run_impl(b, a, t); }
Status run_on(Backend b, const BackwardArgs& a, int t) { return run_impl(b, a, t); }
Status run_on(Backend b, const VarlenBackwardArgs& a, int t) { return run_impl(b, a, t); }
Status run_on(Backend b, const CombineArgs& a, int t) { return run_impl(b, a, t); }

// ----------------------------------------------------------------------------
// Tolerance checks.

double output_atol(DType) { return 1e-5; }

namespace {

std::string index_text(const std::vector<std::int64_t>& index) {
  std::string text = "(";
  for (std::size_t i = 0; i < index.size(); ++i) text += (i ? ", " : "") + std::to_string(index[i]);
  return text + ")";
}

// Storage elements (guards included) that no logical index of t covers must equal `before`.
std::int64_t count_changed_outside_view(const HostTensor& actual, const HostTensor& before,
                                        std::int64_t* first_changed) {
  const std::size_t size = dtype_size(actual.dtype());
  const std::int64_t elements = static_cast<std::int64_t>(actual.storage_bytes() / size);
  std::vector<bool> covered(elements, false);
  actual.for_each_index(
      [&](const std::int64_t* index) { covered[HostTensor::kGuard + actual.offset(index)] = true; });
  std::int64_t changed = 0;
  for (std::int64_t e = 0; e < elements; ++e) {
    if (covered[e]) continue;
    if (std::memcmp(actual.storage() + e * size, before.storage() + e * size, size) != 0) {
      if (changed++ == 0) *first_changed = e - HostTensor::kGuard;
    }
  }
  return changed;
}

bool element_bits_equal(const HostTensor& a, const HostTensor& b, const std::int64_t* index) {
  const std::size_t size = dtype_size(a.dtype());
  return std::memcmp(a.storage() + a.origin_byte_offset() + a.offset(index) * size,
                     b.storage() + b.origin_byte_offset() + b.offset(index) * size, size) == 0;
}

}  // namespace

::testing::AssertionResult expect_close(const std::string& what, const HostTensor& actual,
                                        const HostTensor& before, const HostTensor& ref,
                                        const HostTensor& ref_lowp, Tolerance tol,
                                        const ElementFilter& written) {
  if (actual.shape() != ref.shape() || actual.shape() != ref_lowp.shape()) {
    return ::testing::AssertionFailure() << what << ": shape mismatch between result and reference";
  }
  double lowp_error = 0, ref_magnitude = 0;
  std::int64_t oracle_problems = 0, inf_mismatches = 0, unwritten_changed = 0;
  std::vector<std::int64_t> first_inf_mismatch, first_unwritten;
  actual.for_each_index([&](const std::int64_t* index) {
    if (written && !written(index)) return;
    const double r = ref.get(index), l = ref_lowp.get(index);
    if (std::isnan(r)) {
      ++oracle_problems;
    } else if (std::isfinite(r)) {
      if (!std::isfinite(l))
        ++oracle_problems;
      else
        lowp_error = std::max(lowp_error, std::abs(l - r));
      ref_magnitude = std::max(ref_magnitude, std::abs(r));
    }
  });
  const double bound = tol.factor * lowp_error + tol.atol * std::max(1.0, ref_magnitude) +
                       tol.output_ulps * detail::spacing_at(actual.dtype(), ref_magnitude);

  double worst = -1;
  std::int64_t violations = 0, checked = 0;
  std::vector<std::int64_t> worst_index(actual.rank());
  float worst_actual = 0, worst_ref = 0, worst_lowp = 0;
  actual.for_each_index([&](const std::int64_t* index) {
    if (written && !written(index)) {
      if (!element_bits_equal(actual, before, index)) {
        if (unwritten_changed++ == 0) first_unwritten.assign(index, index + actual.rank());
      }
      return;
    }
    ++checked;
    const float a = actual.get(index), r = ref.get(index);
    if (std::isinf(r)) {
      if (a != r) {
        if (inf_mismatches++ == 0) first_inf_mismatch.assign(index, index + actual.rank());
      }
      return;
    }
    const double error = std::isnan(a) ? INFINITY : std::abs(static_cast<double>(a) - r);
    if (error > bound) ++violations;
    if (error > worst) {
      worst = error;
      worst_index.assign(index, index + actual.rank());
      worst_actual = a;
      worst_ref = r;
      worst_lowp = ref_lowp.get(index);
    }
  });
  std::int64_t first_padding = 0;
  const std::int64_t padding_changed = count_changed_outside_view(actual, before, &first_padding);

  if (violations == 0 && inf_mismatches == 0 && unwritten_changed == 0 && padding_changed == 0 &&
      oracle_problems == 0) {
    return ::testing::AssertionSuccess();
  }
  std::ostringstream msg;
  msg << what << " (" << dtype_name(actual.dtype()) << ", shape " << index_text(actual.shape()) << ", "
      << checked << " elements checked):";
  if (violations) {
    msg << "\n  " << violations << " elements exceed the bound " << bound << " = " << tol.factor
        << " * max|ref_lowp - ref| (" << lowp_error << ") + " << tol.atol
        << " * max(1, max|ref| = " << ref_magnitude << ")";
    if (tol.output_ulps > 0) msg << " + " << tol.output_ulps << " ulp of " << dtype_name(actual.dtype());
    msg << "; worst |out - ref| = " << worst << " at " << index_text(worst_index) << ": out " << worst_actual
        << ", ref " << worst_ref << ", ref_lowp " << worst_lowp;
  }
  if (inf_mismatches) {
    msg << "\n  " << inf_mismatches << " elements where ref is infinite differ, first at "
        << index_text(first_inf_mismatch) << ": out " << actual.get(first_inf_mismatch.data()) << ", ref "
        << ref.get(first_inf_mismatch.data());
  }
  if (unwritten_changed) {
    msg << "\n  " << unwritten_changed << " elements that must stay untouched were written, first at "
        << index_text(first_unwritten) << " (now " << actual.get(first_unwritten.data()) << ")";
  }
  if (padding_changed) {
    msg << "\n  " << padding_changed
        << " storage elements outside the view (padding/guards) were written, first "
        << "at element offset " << first_padding << " from the view origin";
  }
  if (oracle_problems)
    msg << "\n  " << oracle_problems << " elements where ref is NaN or ref_lowp not finite";
  return ::testing::AssertionFailure() << msg.str();
}

::testing::AssertionResult expect_unchanged(const std::string& what, const HostTensor& before,
                                            const HostTensor& after) {
  if (bitwise_equal(before, after)) return ::testing::AssertionSuccess();
  const std::size_t size = dtype_size(before.dtype());
  std::int64_t changed = 0, first = -1;
  for (std::size_t e = 0; e * size < before.storage_bytes(); ++e) {
    if (std::memcmp(before.storage() + e * size, after.storage() + e * size, size) != 0) {
      if (changed++ == 0) first = static_cast<std::int64_t>(e) - HostTensor::kGuard;
    }
  }
  return ::testing::AssertionFailure()
         << what << " was modified: " << changed << " storage elements changed, first at element offset "
         << first << " from the view origin";
}

void expect_inputs_unchanged(const DeviceBinding& device, NamedTensors inputs) {
  for (const auto& [name, tensor] : inputs) {
    if (tensor->defined()) {
      EXPECT_TRUE(expect_unchanged(name, *tensor, device.fetch(*tensor)));
    }
  }
}

::testing::AssertionResult expect_identical(const std::string& what, const HostTensor& a,
                                            const HostTensor& b) {
  if (a.shape() != b.shape()) return ::testing::AssertionFailure() << what << ": shapes differ";
  std::int64_t differ = 0;
  std::vector<std::int64_t> first;
  a.for_each_index([&](const std::int64_t* index) {
    if (!element_bits_equal(a, b, index) && differ++ == 0) first.assign(index, index + a.rank());
  });
  if (differ == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << what << ": " << differ << " elements differ bitwise, first at " << index_text(first) << ": "
         << a.get(first.data()) << " vs " << b.get(first.data());
}

std::string dtype_label(DType dtype) { return dtype_name(dtype); }

std::string sanitize_name(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  return name;
}

}  // namespace flashattn::test
