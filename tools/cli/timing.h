// Timing of library calls: the host's steady clock for the CPU backends, CUDA
// events recorded on the call's stream for the CUDA ones (the host clock would
// measure only the launch, since library calls do not synchronise).
#pragma once

#include <functional>
#include <vector>

#include "flashattn/tensor.h"

namespace flashattn::cli {

// The stream calls run on: a fresh non-blocking CUDA stream on a GPU, nothing on the CPU.
class Stream {
 public:
  explicit Stream(Device device);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void* handle() const { return handle_; }  // cudaStream_t, or null on the CPU
  void synchronize() const;

 private:
  Device device_;
  void* handle_ = nullptr;
};

// Milliseconds one call of `fn` takes on `stream`'s device; `fn` must queue its
// work on that stream.
double time_call_ms(const Stream& stream, Device device, const std::function<void()>& fn);

// Host microseconds per call of `fn` on a CUDA device: `calls` calls queued back to back on `stream`
// without waiting (the wall time until the last one returns, over `calls`), the best of `rounds`, after one
// synchronisation. What a caller's thread spends in the library per call: validation, kernel choice, the
// launch API. `calls` stays far below the launch queue's depth, so the GPU's progress does not throttle the
// loop (a call that queues k launches fills it k times faster).
double host_time_us(const Stream& stream, const std::function<void()>& fn, int calls, int rounds);

// Median of the samples (the mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> samples);

}  // namespace flashattn::cli
