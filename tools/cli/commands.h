// The subcommands of the flashattn tool.
#pragma once

#include <string>
#include <vector>

#include "problem.h"
#include "runner.h"

namespace flashattn::cli {

// flashattn info: version, backends, devices, what each backend supports.
int info_command();

// flashattn run: one problem from flags.
struct RunCommandOptions {
  ProblemSpec spec;
  RunOptions run;
};
int run_command(const RunCommandOptions& options);

// flashattn bench: a grid of problems.
struct BenchCommandOptions {
  DType dtype = DType::bfloat16;
  std::vector<std::int64_t> head_dims;  // empty: the default grid's
  std::vector<std::int64_t> seqlens;    // empty: the default grid's
  std::int64_t tokens = 0;              // per batch; 0: default
  std::int64_t hidden = 0;              // h * d; 0: default
  std::string mask = "both";            // causal: "both", "causal", "none"
  bool backward = false;                // time the backward too
  bool deterministic = false;           // backward in its bitwise-reproducible mode
  RunOptions run;                       // repeats < 0: default
  std::string json_path;
  std::uint64_t seed = 0;
};
int bench_command(const BenchCommandOptions& options);

// "2.00 ms" / "3.1 TFLOP/s" style helpers shared by run and bench.
std::string format_time_ms(double ms);
std::string format_rate(double flops_per_second);
std::string device_label(Device device);

}  // namespace flashattn::cli
