// Memory the CLI owns. The library allocates nothing; its caller does, and
// here the caller is the CLI: host memory for the CPU backends, cudaMalloc'd
// memory for the CUDA ones. Failures throw (this is a program, not the library).
#pragma once

#include <cstddef>

#include "flashattn/tensor.h"

namespace flashattn::cli {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // 256-byte aligned (the workspace contract), on `device`.
  DeviceBuffer(Device device, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

  // Copies bytes() bytes from / to host memory.
  void upload(const void* host);
  void download(void* host) const;
  // Sets every byte; 0xFF makes every fp16, bf16 and fp32 element a NaN, which
  // is how outputs are poisoned before a launch.
  void fill_bytes(unsigned char value);

 private:
  void release() noexcept;

  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  Device device_{};
};

// Waits for all work queued on the device (no-op on the CPU).
void synchronize(Device device);

}  // namespace flashattn::cli
