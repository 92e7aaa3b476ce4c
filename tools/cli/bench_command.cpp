// flashattn bench: the standard grid (or one given by flags), timed and checked
// on sampled rows.
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "commands.h"
#include "report.h"

namespace flashattn::cli {
namespace {

// The standard grid of FlashAttention's benchmarks: 16k tokens per batch
// (b = 16384 / seqlen), hidden 2048 (h = 2048 / d). On the CPU the grid keeps
// its shape at 1/64 of the work (1k tokens, hidden 512, seqlen 128..1024) so
// that it finishes in about a minute on two cores.
struct Grid {
  std::vector<std::int64_t> head_dims, seqlens;
  std::int64_t tokens = 0, hidden = 0;
  int repeats = 0;
};

Grid default_grid(Device device) {
  if (device.type == DeviceType::cuda)
    return {{64, 128, 256}, {512, 1024, 2048, 4096, 8192, 16384}, 16384, 2048, 10};
  return {{64, 128, 256}, {128, 256, 512, 1024}, 1024, 512, 3};
}

struct Row {
  ProblemSpec spec;
  RunResult result;
};

std::vector<std::string> table_cells(const Row& row, bool tera) {
  const ProblemSpec& s = row.spec;
  std::vector<std::string> cells{std::to_string(s.head_dim), std::to_string(s.seqlen_q),
                                 std::to_string(s.batch),    std::to_string(s.heads),
                                 s.causal ? "yes" : "no",    s.backward ? "bwd" : "fwd"};
  const RunResult& r = row.result;
  if (!r.ran) {
    cells.insert(cells.end(), {"-", "-", "-", "unsupported: " + r.message});
    return cells;
  }
  const double rate = r.time_ms > 0.0 ? r.flops / (r.time_ms * 1e-3) / (tera ? 1e12 : 1e9) : 0.0;
  cells.push_back(fixed(r.time_ms, 3));
  cells.push_back(fixed(rate, tera ? 1 : 2));
  cells.push_back(r.verified() ? scientific(r.max_error()) : "-");
  cells.push_back(!r.verified() ? "not checked" : (r.passed() ? "ok " : "FAIL ") + r.kernel);
  return cells;
}

std::string json_row(const Row& row) {
  const ProblemSpec& s = row.spec;
  const RunResult& r = row.result;
  JsonObject o;
  o.add("direction", s.backward ? "bwd" : "fwd")
      .add("dtype", dtype_name(s.dtype))
      .add("batch", static_cast<long long>(s.batch))
      .add("seqlen_q", static_cast<long long>(s.seqlen_q))
      .add("seqlen_k", static_cast<long long>(s.seqlen_k))
      .add("heads", static_cast<long long>(s.heads))
      .add("heads_kv", static_cast<long long>(s.heads_kv))
      .add("head_dim", static_cast<long long>(s.head_dim))
      .add("causal", s.causal)
      .add("ran", r.ran);
  if (!r.ran) {
    o.add("message", r.message);
    return o.str();
  }
  o.add("kernel", r.kernel)
      .add("time_ms", r.time_ms)
      .add("flops", r.flops)
      .add("tflops", r.tflops())
      .add("verified", r.verified());
  if (r.verified()) {
    std::string checks = "[";
    for (const ErrorCheck& c : r.checks) {
      if (checks.size() > 1) checks += ", ";
      checks += JsonObject()
                    .add("tensor", c.tensor)
                    .add("max_error", c.max_error)
                    .add("lowp_error", c.lowp_error)
                    .add("factor", c.factor)
                    .add("tolerance", c.tolerance)
                    .add("passed", c.passed)
                    .str();
    }
    o.add("max_error", r.max_error())
        .add("passed", r.passed())
        .add("scope", r.verified_scope)
        .add_raw("checks", checks + "]");
  }
  return o.str();
}

}  // namespace

int bench_command(const BenchCommandOptions& options) {
  const Device device = device_for(options.run.backend);
  const Grid defaults = default_grid(device);
  const auto& head_dims = options.head_dims.empty() ? defaults.head_dims : options.head_dims;
  const auto& seqlens = options.seqlens.empty() ? defaults.seqlens : options.seqlens;
  const std::int64_t tokens = options.tokens > 0 ? options.tokens : defaults.tokens;
  const std::int64_t hidden = options.hidden > 0 ? options.hidden : defaults.hidden;
  RunOptions run = options.run;
  if (device.type == DeviceType::cuda) {
    if (options.run.backend != Backend::automatic && !backend_compiled(options.run.backend)) {
      std::cerr << "flashattn bench: " << backend_name(options.run.backend)
                << " is not compiled into this build\n";
      return 2;
    }
    if (cuda_device_count() == 0) {
      std::cerr << "flashattn bench: " << backend_name(options.run.backend)
                << ": no CUDA device is visible\n";
      return 2;
    }
  }
  if (run.repeats < 0) run.repeats = defaults.repeats;

  std::vector<bool> masks;
  if (options.mask != "causal") masks.push_back(false);
  if (options.mask != "none") masks.push_back(true);
  std::vector<ProblemSpec> specs;
  for (std::int64_t d : head_dims) {
    for (bool causal : masks) {
      for (std::int64_t s : seqlens) {
        for (bool backward : {false, true}) {
          if (backward && !options.backward) continue;
          ProblemSpec spec;
          spec.batch = std::max<std::int64_t>(1, tokens / s);
          spec.seqlen_q = s;
          spec.heads = std::max<std::int64_t>(1, hidden / d);
          spec.head_dim = d;
          spec.dtype = options.dtype;
          spec.causal = causal;
          spec.backward = backward;
          spec.deterministic = backward && options.deterministic;
          spec.seed = options.seed;
          spec.resolve();
          specs.push_back(spec);
        }
      }
    }
  }

  const bool tera = device.type == DeviceType::cuda;
  std::ostringstream threads;
  if (device.type == DeviceType::cpu) {
    const int n = run.threads > 0 ? run.threads : static_cast<int>(std::thread::hardware_concurrency());
    threads << ", " << n << " threads";
  }
  std::cout << "flashattn bench: " << specs.size() << " problems, " << dtype_name(options.dtype)
            << ", backend "
            << (options.run.backend == Backend::automatic ? "auto (the fastest that runs each problem)"
                                                          : backend_name(options.run.backend))
            << " on " << device_label(device) << threads.str() << "\n"
            << "grid: " << tokens << " tokens per batch (b = " << tokens << " / seqlen), hidden " << hidden
            << " (h = " << hidden << " / d)"
            << (device.type == DeviceType::cpu && options.tokens == 0 && options.hidden == 0
                    ? ", 1/64 of the standard GPU grid's work"
                    : "")
            << "; median of " << run.repeats << " calls; "
            << (run.verify == VerifyMode::none ? "not checked"
                                               : "checked against cpu_reference on sampled rows")
            << "\n\n";

  // Widths fixed up front: without a terminal, rows are printed as they finish.
  Table table({{"d", true, 3},
               {"seqlen", true, 6},
               {"batch", true, 5},
               {"heads", true, 5},
               {"causal"},
               {"dir"},
               {"time ms", true, 9},
               {tera ? "TFLOP/s" : "GFLOP/s", true, 8},
               {"max err", true, 9},
               {"check / kernel"}});
  ProgressBar progress(stdout, static_cast<int>(specs.size()));
  if (!progress.active()) table.print_header(std::cout);

  std::vector<Row> rows;
  int failed = 0, unsupported = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    progress.update(static_cast<int>(i), (specs[i].backward ? "bwd " : "fwd ") + specs[i].describe());
    Row row{specs[i], {}};
    const HostProblem problem = make_host_problem(specs[i]);
    row.result = run_problem(problem, run);
    if (!row.result.ran) ++unsupported;
    if (row.result.ran && !row.result.passed()) ++failed;
    const std::vector<std::string> cells = table_cells(row, tera);
    if (progress.active()) {
      table.add_row(cells);
    } else {
      table.print_row(std::cout, cells);
    }
    rows.push_back(std::move(row));
  }
  progress.clear();
  if (progress.active()) table.print(std::cout);

  const std::size_t ran = rows.size() - unsupported;
  std::cout << "\n" << ran << " of " << rows.size() << " problems ran";
  if (unsupported > 0) std::cout << " (" << unsupported << " unsupported by this backend)";
  if (run.verify != VerifyMode::none)
    std::cout << "; " << ran - failed << " passed the check, " << failed << " failed";
  std::cout << "\n";

  if (!options.json_path.empty()) {
    std::ofstream json(options.json_path);
    if (!json) {
      std::cerr << "flashattn bench: cannot write " << options.json_path << "\n";
      return 2;
    }
    json << "{\n  \"device\": \"" << json_escape(device_label(device)) << "\",\n  \"backend\": \""
         << backend_name(options.run.backend) << "\",\n  \"version\": \"" << version()
         << "\",\n  \"results\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      json << "    " << json_row(rows[i]) << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    json << "  ]\n}\n";
    std::cout << "wrote " << options.json_path << "\n";
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace flashattn::cli
