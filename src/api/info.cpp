// What this build contains and what it can see: version, compiled backends,
// CUDA devices, and the CPU worker-thread count.
#include "flashattn/info.h"

#include <cstdio>
#include <cstring>
#include <thread>

#include "backend.h"

#if FLASHATTN_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#ifndef FLASHATTN_VERSION
#define FLASHATTN_VERSION "0.0.0"
#endif

namespace flashattn {

const char* version() noexcept { return FLASHATTN_VERSION; }

const char* backend_name(Backend backend) noexcept {
  switch (backend) {
    case Backend::automatic:
      return "automatic";
    case Backend::cpu_reference:
      return "cpu_reference";
    case Backend::cpu_tiled:
      return "cpu_tiled";
    case Backend::cuda_sm80:
      return "cuda_sm80";
    case Backend::cuda_sm90:
      return "cuda_sm90";
  }
  return "invalid-backend";
}

bool backend_compiled(Backend backend) noexcept {
  switch (backend) {
    case Backend::automatic:
    case Backend::cpu_reference:
    case Backend::cpu_tiled:
      return true;
    case Backend::cuda_sm80:
      return FLASHATTN_WITH_CUDA != 0;
    case Backend::cuda_sm90:
      return FLASHATTN_WITH_SM90 != 0;
  }
  return false;
}

int cuda_device_count() noexcept {
#if FLASHATTN_WITH_CUDA
  int count = 0;
  // No driver or no device is "zero devices", not an error.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

Status cuda_device_info(int index, CudaDeviceInfo* info) noexcept {
  if (info == nullptr) return Status::error(ErrorCode::invalid_argument, "info: null pointer");
#if FLASHATTN_WITH_CUDA
  const int count = cuda_device_count();
  if (index < 0 || index >= count) {
    return Status::error(ErrorCode::invalid_argument, "index: CUDA device %d out of range [0, %d)", index,
                         count);
  }
  cudaDeviceProp prop;
  const cudaError_t err = cudaGetDeviceProperties(&prop, index);
  if (err != cudaSuccess) {
    return Status::error(ErrorCode::cuda_error, "cudaGetDeviceProperties(%d): %s", index,
                         cudaGetErrorString(err));
  }
  *info = CudaDeviceInfo{};
  info->index = index;
  // Device names fit in 128 bytes in practice; cut (never overflow) if one does not.
  const std::size_t name_length = strnlen(prop.name, sizeof info->name - 1);
  std::memcpy(info->name, prop.name, name_length);
  info->name[name_length] = '\0';
  info->compute_capability = prop.major * 10 + prop.minor;
  info->multiprocessors = prop.multiProcessorCount;
  info->memory_bytes = prop.totalGlobalMem;
  return Status();
#else
  (void)index;
  return Status::error(ErrorCode::unsupported,
                       "cuda_device_info: CUDA support is not compiled into this build (FLASHATTN_CUDA=OFF)");
#endif
}

namespace detail {

int cpu_threads(const ExecutionContext& ctx) noexcept {
  if (ctx.num_threads > 0) return ctx.num_threads;
  // hardware_concurrency() reads /sys on every call (microseconds, as long as a tiny
  // attention call), so it is read once; the value never changes after, so this is a
  // constant, not mutable global state.
  static const int hardware = [] {
    const unsigned count = std::thread::hardware_concurrency();  // 0 when unknown
    return count > 0 ? static_cast<int>(count) : 1;
  }();
  return hardware;
}

}  // namespace detail
}  // namespace flashattn
