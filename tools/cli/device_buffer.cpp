#include "device_buffer.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#if FLASHATTN_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace flashattn::cli {

#if FLASHATTN_WITH_CUDA
namespace {
void check_cuda(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(error));
  }
}
}  // namespace
#endif

DeviceBuffer::DeviceBuffer(Device device, std::size_t bytes) : bytes_(bytes), device_(device) {
  if (bytes == 0) return;
  if (device.type == DeviceType::cpu) {
    constexpr std::size_t kAlign = 256;
    data_ = std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
    if (data_ == nullptr) throw std::bad_alloc();
    return;
  }
#if FLASHATTN_WITH_CUDA
  check_cuda(cudaSetDevice(device.index), "cudaSetDevice");
  check_cuda(cudaMalloc(&data_, bytes), ("cudaMalloc of " + std::to_string(bytes) + " bytes").c_str());
#else
  throw std::runtime_error("this flashattn was built without CUDA");
#endif
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      device_(other.device_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    device_ = other.device_;
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (data_ == nullptr) return;
  if (device_.type == DeviceType::cpu) {
    std::free(data_);
  } else {
#if FLASHATTN_WITH_CUDA
    cudaFree(data_);
#endif
  }
  data_ = nullptr;
}

void DeviceBuffer::upload(const void* host) {
  if (bytes_ == 0) return;
  if (device_.type == DeviceType::cpu) {
    std::memcpy(data_, host, bytes_);
    return;
  }
#if FLASHATTN_WITH_CUDA
  check_cuda(cudaMemcpy(data_, host, bytes_, cudaMemcpyHostToDevice), "cudaMemcpy to device");
#endif
}

void DeviceBuffer::download(void* host) const {
  if (bytes_ == 0) return;
  if (device_.type == DeviceType::cpu) {
    std::memcpy(host, data_, bytes_);
    return;
  }
#if FLASHATTN_WITH_CUDA
  check_cuda(cudaMemcpy(host, data_, bytes_, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
#endif
}

void DeviceBuffer::fill_bytes(unsigned char value) {
  if (bytes_ == 0) return;
  if (device_.type == DeviceType::cpu) {
    std::memset(data_, value, bytes_);
    return;
  }
#if FLASHATTN_WITH_CUDA
  check_cuda(cudaMemset(data_, value, bytes_), "cudaMemset");
#endif
}

void synchronize(Device device) {
  if (device.type == DeviceType::cpu) return;
#if FLASHATTN_WITH_CUDA
  check_cuda(cudaSetDevice(device.index), "cudaSetDevice");
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
#endif
}

}  // namespace flashattn::cli
