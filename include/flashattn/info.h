// What this build of flashattn contains and what it can see.
#pragma once

#include "flashattn/attention.h"

namespace flashattn {

const char* version() noexcept;  // "MAJOR.MINOR.PATCH"

// True when the backend was compiled into this library (the CPU ones always are).
bool backend_compiled(Backend backend) noexcept;

struct CudaDeviceInfo {
  int index = 0;
  char name[128] = {};
  int compute_capability = 0;  // major * 10 + minor, e.g. 90
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
};

// Number of CUDA devices visible (0 when CUDA is not compiled in or no driver).
int cuda_device_count() noexcept;
Status cuda_device_info(int index, CudaDeviceInfo* info) noexcept;

}  // namespace flashattn
