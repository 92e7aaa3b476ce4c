#include "timing.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#if FLASHATTN_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace flashattn::cli {

#if FLASHATTN_WITH_CUDA
namespace {
void check_cuda(cudaError_t error, const char* what) {
  if (error != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(error));
}
}  // namespace
#endif

Stream::Stream(Device device) : device_(device) {
  if (device.type == DeviceType::cpu) return;
#if FLASHATTN_WITH_CUDA
  check_cuda(cudaSetDevice(device.index), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  handle_ = stream;
#endif
}

Stream::~Stream() {  // NOLINT(modernize-use-equals-default): not empty with CUDA
#if FLASHATTN_WITH_CUDA
  if (handle_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(handle_));
#endif
}

void Stream::synchronize() const {
#if FLASHATTN_WITH_CUDA
  if (handle_ != nullptr) {
    check_cuda(cudaStreamSynchronize(static_cast<cudaStream_t>(handle_)), "cudaStreamSynchronize");
  }
#endif
}

double time_call_ms(const Stream& stream, Device device, const std::function<void()>& fn) {
  if (device.type == DeviceType::cpu) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    const auto stop = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::milli>(stop - start).count();
  }
#if FLASHATTN_WITH_CUDA
  auto* cuda_stream = static_cast<cudaStream_t>(stream.handle());
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  check_cuda(cudaEventRecord(start, cuda_stream), "cudaEventRecord");
  fn();
  check_cuda(cudaEventRecord(stop, cuda_stream), "cudaEventRecord");
  check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0.f;
  check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
#else
  (void)stream;
  throw std::runtime_error("this flashattn was built without CUDA");
#endif
}

double host_time_us(const Stream& stream, const std::function<void()>& fn, int calls, int rounds) {
  double best = 0.0;
  for (int r = 0; r < rounds; ++r) {
    stream.synchronize();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) fn();
    const auto stop = std::chrono::steady_clock::now();
    const double us = std::chrono::duration<double, std::micro>(stop - start).count() / calls;
    if (r == 0 || us < best) best = us;
  }
  stream.synchronize();
  return best;
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  return n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

}  // namespace flashattn::cli
