// flashattn run: one problem, timed and checked.
#include <cstdio>
#include <iostream>
#include <thread>

#include "commands.h"
#include "report.h"

namespace flashattn::cli {

std::string format_time_ms(double ms) {
  if (ms >= 1000.0) return fixed(ms / 1000.0, 3) + " s";
  if (ms >= 1.0) return fixed(ms, 3) + " ms";
  return fixed(ms * 1000.0, 1) + " us";
}

std::string format_rate(double flops_per_second) {
  if (flops_per_second >= 1e12) return fixed(flops_per_second / 1e12, 1) + " TFLOP/s";
  return fixed(flops_per_second / 1e9, 2) + " GFLOP/s";
}

std::string device_label(Device device) {
  if (device.type == DeviceType::cpu) {
    return "CPU";
  }
  CudaDeviceInfo info;
  if (cuda_device_info(device.index, &info).ok()) {
    return "CUDA device " + std::to_string(device.index) + " (" + info.name + ")";
  }
  return "CUDA device " + std::to_string(device.index);
}

namespace {

std::string threads_label(Device device, int threads) {
  if (device.type != DeviceType::cpu) return "";
  const int n = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  return ", " + std::to_string(n) + (n == 1 ? " thread" : " threads");
}

}  // namespace

int run_command(const RunCommandOptions& options) {
  const HostProblem problem = make_host_problem(options.spec);
  const ProblemSpec& s = problem.spec;
  const RunOptions& o = options.run;
  std::cout << "flashattn run: " << (s.backward ? "backward " : "forward ") << s.describe() << "\n";

  const RunResult r = run_problem(problem, o);
  if (!r.ran) {
    std::cout << "not run: " << r.message << "\n";
    return 2;
  }
  std::cout << "kernel     " << r.kernel << " on " << device_label(r.device)
            << threads_label(r.device, o.threads) << "\n";
  std::cout << "time       " << format_time_ms(r.time_ms) << " (median of " << o.repeats << " calls)\n";
  if (r.host_us >= 0.0) {
    std::cout << "host       " << fixed(r.host_us, 1) << " us per call (" << o.host_calls
              << " calls queued back to back, best of 3: validation, kernel choice, launches)\n";
  }
  if (r.host_us < 0.0 && o.host_calls > 0) {
    std::cout
        << "host       not timed apart (a CPU backend computes on the calling thread: the time above)\n";
  }
  std::cout << "speed      " << (r.time_ms > 0.0 ? format_rate(r.flops / (r.time_ms * 1e-3)) : "-") << " ("
            << fixed(r.flops / 1e9, 3) << " GFLOP" << (s.causal ? ", causal counted as half" : "") << ")\n";
  if (!r.verified()) {
    std::cout << "check      skipped (--verify none)\n";
    return 0;
  }
  std::cout << "check      against cpu_reference (float64), " << r.verified_scope << ":\n";
  for (const ErrorCheck& c : r.checks) {
    std::cout << "  " << c.tensor << ": max|" << c.tensor << " - ref| = " << scientific(c.max_error)
              << (c.passed ? " <= " : " >  ") << scientific(c.tolerance) << " = " << c.factor << " x "
              << scientific(c.lowp_error) << " (same math in " << dtype_name(s.dtype) << ") + atol"
              << (s.backward ? " + ulp/2" : "") << "   " << (c.passed ? "PASS" : "FAIL") << "\n";
  }
  if (r.unwritten >= 0) {
    std::cout << "  out: NaN elements in every row of every sequence and head (poisoned before the call) = "
              << r.unwritten << "   " << (r.unwritten == 0 ? "PASS" : "FAIL") << "\n";
  }
  return r.passed() ? 0 : 1;
}

}  // namespace flashattn::cli
