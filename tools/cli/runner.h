// Runs one problem on one backend: places the inputs on the backend's device,
// runs the operation once with poisoned outputs, times repeated calls, and
// checks the results against the cpu_reference backend with the FlashAttention
// rule  max|out - ref| <= 2 * max|ref_lowp - ref| + atol.
#pragma once

#include <string>
#include <vector>

#include "flashattn/flashattn.h"
#include "problem.h"

namespace flashattn::cli {

enum class VerifyMode {
  automatic,  // full when the reference is cheap, else sampled
  full,       // every output element
  sample,     // sequence 0, the first few heads, the last rows (see RunOptions)
  none,
};
bool parse_verify_mode(const std::string& text, VerifyMode* mode);

struct RunOptions {
  Backend backend = Backend::automatic;
  int threads = 0;  // CPU backends: 0 = all hardware threads
  int repeats = 5;  // timed calls after the first (checked) call
  VerifyMode verify = VerifyMode::automatic;
  int sample_heads = 2;   // q heads kept when sampling (rounded up to whole GQA groups)
  int sample_rows = 128;  // last query rows kept when sampling (forward without dropout)
  int host_calls = 0;     // > 0 (CUDA): also time the host's part of a call over this many queued calls
};

// One output tensor checked against the reference.
struct ErrorCheck {
  std::string tensor;       // "out", "dq", ...
  double max_error = 0.0;   // max|actual - ref|
  double lowp_error = 0.0;  // max|ref_lowp - ref|: the same math in the input precision
  double factor = 2.0;      // on lowp_error
  double tolerance = 0.0;   // factor * lowp_error + atol
  bool passed = false;
};

struct RunResult {
  bool ran = false;     // false: the library refused (message says why) or the run failed
  std::string message;  // the Status message when !ran
  std::string kernel;   // select_kernel's answer, e.g. "cpu_tiled/forward/bf16/d128"
  Device device{};
  double time_ms = 0.0;  // median of the timed calls
  // RunOptions::host_calls: host microseconds per call (timing.h host_time_us); -1: not timed.
  double host_us = -1.0;
  double flops = 0.0;
  std::vector<ErrorCheck> checks;  // empty when not verified
  std::string verified_scope;      // "all rows", "sequence 0, heads 0-1, last 128 rows", ...
  // Forward, verified: elements of `out` still NaN (poisoned before the checked call, so never written,
  // or NaN written) in every row of every sequence and head, also outside a sampled scope. -1: not scanned.
  std::int64_t unwritten = -1;

  double tflops() const { return time_ms > 0.0 ? flops / (time_ms * 1e-3) / 1e12 : 0.0; }
  bool verified() const { return !checks.empty(); }
  bool passed() const;
  double max_error() const;  // over checks
};

// The device the backend computes on: the CPU for CPU backends, CUDA device 0
// for CUDA ones; for Backend::automatic, CUDA device 0 when a CUDA backend is
// compiled in and a device is visible, else the CPU.
Device device_for(Backend backend);

RunResult run_problem(const HostProblem& problem, const RunOptions& options);

// Asks select_kernel (nothing is computed) whether `backend` runs the problem's
// operation (forward, or backward with spec.backward), with its tensors on the
// backend's device.
Status query_support(const HostProblem& problem, Backend backend, KernelChoice* choice);

}  // namespace flashattn::cli
