// flashattn: the command-line tool.
//
//   flashattn info                  version, backends, devices, feature support
//   flashattn run  [problem flags]  one problem: time, FLOP/s, error vs the reference
//   flashattn bench [grid flags]    the standard benchmark grid, as a table and JSON
//
// The tool is a caller of the public API like any other: it owns all memory
// (cudaMalloc'd for the CUDA backends), and times calls with CUDA events there.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>

#include "commands.h"

namespace {

using flashattn::Backend;
using flashattn::DType;
namespace cli = flashattn::cli;

// CLI11 validators that turn text into the library's enums with a clear error.
std::string check_dtype(const std::string& text) {
  DType dtype;
  return cli::parse_dtype(text, &dtype) ? "" : "dtype must be fp16, bf16 or fp32, got '" + text + "'";
}
std::string check_backend(const std::string& text) {
  Backend backend;
  return cli::parse_backend(text, &backend)
             ? ""
             : "backend must be auto, cpu_reference, cpu_tiled, cuda_sm80 or cuda_sm90, got '" + text + "'";
}
std::string check_verify(const std::string& text) {
  cli::VerifyMode mode;
  return cli::parse_verify_mode(text, &mode)
             ? ""
             : "verify must be auto, full, sample or none, got '" + text + "'";
}

// "L,R" with -1 for an unbounded side.
bool parse_window(const std::string& text, flashattn::Window* window) {
  std::istringstream in(text);
  char comma = 0;
  if (!(in >> window->left >> comma >> window->right) || comma != ',' || !in.eof()) return false;
  return window->left >= -1 && window->right >= -1;
}

}  // namespace

int run_tool(int argc, char** argv) {
  CLI::App app{"flashattn: exact attention of the FlashAttention family (C++ API, CPU and CUDA backends)",
               "flashattn"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(flashattn::version()));

  // --- info
  CLI::App* info = app.add_subcommand("info", "Version, compiled backends, CUDA devices, feature support");

  // --- run
  cli::RunCommandOptions run;
  std::string run_dtype = "bf16", run_backend = "auto", run_window, run_verify = "auto";
  CLI::App* run_cmd = app.add_subcommand("run", "Run, time and check one attention problem");
  auto& s = run.spec;
  run_cmd->add_option("-b,--batch", s.batch, "Batch size (sequences)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--seqlen-q", s.seqlen_q, "Query length (max length with --varlen)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--seqlen-k", s.seqlen_k, "Key length (default: --seqlen-q)")
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--heads", s.heads, "Query heads")->capture_default_str()->check(CLI::PositiveNumber);
  run_cmd->add_option("--heads-kv", s.heads_kv, "Key/value heads (default: --heads; fewer = GQA)")
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--head-dim", s.head_dim, "Head dim of q and k")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--head-dim-v", s.head_dim_v, "Head dim of v (default: --head-dim)")
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--dtype", run_dtype, "fp16, bf16 or fp32")->capture_default_str()->check(check_dtype);
  run_cmd->add_flag("--causal", s.causal, "Causal mask (bottom-right aligned)");
  run_cmd->add_option("--window", run_window, "Sliding window L,R (-1 = unbounded side)");
  run_cmd->add_option("--softcap", s.softcap, "Softcap c: S = c * tanh(S / c)")
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_flag("--alibi", s.alibi, "ALiBi with the usual geometric slopes");
  run_cmd->add_option("--dropout", s.dropout, "Dropout probability")->check(CLI::Range(0.0, 0.999));
  run_cmd->add_flag("--sink", s.sink, "Learnable per-head sink logit (random)");
  run_cmd->add_flag(
      "--key-padding-mask", s.key_padding,
      "A bool key-padding mask (options.bias, (b, 1, 1, sk)) hiding each sequence's last quarter of keys "
      "(batched problems)");
  run_cmd->add_flag("--varlen", s.varlen, "Variable length: random lengths in [1, seqlen] per sequence");
  run_cmd->add_option("--paged", s.page_size, "Paged K/V with this page size (rows per page)")
      ->check(CLI::PositiveNumber);
  run_cmd->add_flag("--backward", s.backward, "Time and check the backward (dq, dk, dv)");
  run_cmd->add_flag("--deterministic", s.deterministic, "Backward in its bitwise-reproducible mode");
  run_cmd->add_option("--backend", run_backend, "auto, cpu_reference, cpu_tiled, cuda_sm80, cuda_sm90")
      ->capture_default_str()
      ->check(check_backend);
  run_cmd->add_option("--threads", run.run.threads, "CPU worker threads (0 = all)")
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--seed", s.seed, "Seed of the random inputs")->capture_default_str();
  run_cmd->add_option("--repeat", run.run.repeats, "Timed calls (the median is reported)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  run_cmd
      ->add_option("--host-time", run.run.host_calls,
                   "CUDA: also report the host's time per call, over this many calls queued back to back")
      ->check(CLI::Range(1, 200));
  run_cmd->add_option("--verify", run_verify, "auto (full when cheap, else sampled), full, sample or none")
      ->capture_default_str()
      ->check(check_verify);

  // --- bench
  cli::BenchCommandOptions bench;
  bench.run.repeats = -1;
  std::string bench_dtype = "bf16", bench_backend = "auto", bench_verify = "sample";
  CLI::App* bench_cmd = app.add_subcommand("bench",
                                           "Time the standard grid (16k tokens, hidden 2048, d 64/128/256, "
                                           "seqlen 512..16k; scaled down on the CPU)");
  bench_cmd->add_option("--backend", bench_backend, "auto, cpu_reference, cpu_tiled, cuda_sm80, cuda_sm90")
      ->capture_default_str()
      ->check(check_backend);
  bench_cmd->add_option("--dtype", bench_dtype, "fp16, bf16 or fp32")
      ->capture_default_str()
      ->check(check_dtype);
  bench_cmd->add_option("--head-dims", bench.head_dims, "Head dims (default 64 128 256)")->delimiter(',');
  bench_cmd
      ->add_option("--seqlens", bench.seqlens, "Sequence lengths (default: GPU 512..16384, CPU 128..1024)")
      ->delimiter(',');
  bench_cmd->add_option("--tokens", bench.tokens,
                        "Tokens per batch: batch = tokens / seqlen (default: GPU 16384, CPU 1024)");
  bench_cmd->add_option("--hidden", bench.hidden,
                        "Hidden size: heads = hidden / d (default: GPU 2048, CPU 512)");
  bench_cmd->add_option("--mask", bench.mask, "both, causal or none")
      ->capture_default_str()
      ->check(CLI::IsMember({"both", "causal", "none"}));
  bench_cmd->add_flag("--backward", bench.backward, "Also time the backward");
  bench_cmd->add_flag("--deterministic", bench.deterministic, "Backward in its bitwise-reproducible mode");
  bench_cmd->add_option("--repeat", bench.run.repeats, "Timed calls per problem (default: GPU 10, CPU 3)");
  bench_cmd->add_option("--threads", bench.run.threads, "CPU worker threads (0 = all)")
      ->check(CLI::NonNegativeNumber);
  bench_cmd->add_option("--verify", bench_verify, "sample (default), full, auto or none")
      ->capture_default_str()
      ->check(check_verify);
  bench_cmd->add_option("--json", bench.json_path, "Also write the results as JSON to this file");
  bench_cmd->add_option("--seed", bench.seed, "Seed of the random inputs");

  CLI11_PARSE(app, argc, argv);

  if (info->parsed()) return cli::info_command();
  if (run_cmd->parsed()) {
    cli::parse_dtype(run_dtype, &s.dtype);
    cli::parse_backend(run_backend, &run.run.backend);
    cli::parse_verify_mode(run_verify, &run.run.verify);
    if (!run_window.empty() && !parse_window(run_window, &s.window)) {
      std::cerr << "--window: expected L,R with integers >= -1 (e.g. 128,0), got '" << run_window << "'\n";
      return 2;
    }
    return cli::run_command(run);
  }
  if (bench_cmd->parsed()) {
    cli::parse_dtype(bench_dtype, &bench.dtype);
    cli::parse_backend(bench_backend, &bench.run.backend);
    cli::parse_verify_mode(bench_verify, &bench.run.verify);
    return cli::bench_command(bench);
  }
  return 0;
}

int main(int argc, char** argv) {
  // Failures outside the library (allocation, CUDA runtime calls of the tool itself) throw.
  try {
    return run_tool(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "flashattn: " << e.what() << "\n";
    return 2;
  }
}
