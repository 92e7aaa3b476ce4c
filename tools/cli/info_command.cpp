// flashattn info: what this build contains and what it can run. The support
// table is not a list kept by hand: every cell is select_kernel's answer for a
// small problem with that feature, so it cannot drift from the code.
#include <deque>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>

#include "commands.h"
#include "report.h"

namespace flashattn::cli {
namespace {

constexpr Backend kAllBackends[] = {Backend::cpu_reference, Backend::cpu_tiled, Backend::cuda_sm80,
                                    Backend::cuda_sm90};

bool is_cuda(Backend b) { return b == Backend::cuda_sm80 || b == Backend::cuda_sm90; }

// A small problem of the feature a table row names.
using Feature = std::function<void(ProblemSpec&)>;

ProblemSpec base_problem() {
  ProblemSpec s;
  s.batch = 2;
  s.seqlen_q = 8;
  s.heads = 2;
  s.head_dim = 64;
  s.dtype = DType::float16;
  // Not resolved here: a probe that changes head_dim must get dv = head_dim, not the base's 64.
  return s;
}

// Memory for the hand-built KV-cache and combine problems, on the backend's device.
struct Arena {
  Device device;
  std::deque<DeviceBuffer> memory;
  TensorView tensor(DType dtype, std::initializer_list<std::int64_t> shape,
                    const std::vector<std::int32_t>* ints = nullptr) {
    std::int64_t numel = 1;
    for (std::int64_t n : shape) numel *= n;
    memory.emplace_back(device, static_cast<std::size_t>(numel) * dtype_size(dtype));
    if (ints != nullptr) {
      memory.back().upload(ints->data());
    } else {
      memory.back().fill_bytes(0);
    }
    return TensorView::contiguous(memory.back().data(), dtype, shape, device);
  }
};

Status kvcache_support(Backend backend, bool paged, bool rotary, KernelChoice* choice) {
  Arena a{device_for(backend), {}};
  const DType t = DType::float16;
  const std::vector<std::int32_t> seqlens{4, 7}, table{0, 1, 2, 3};
  KVCacheForwardArgs args;
  args.q = a.tensor(t, {2, 1, 2, 64});
  if (paged) {
    args.k_cache = a.tensor(t, {4, 8, 2, 64});
    args.v_cache = a.tensor(t, {4, 8, 2, 64});
    args.block_table = a.tensor(DType::int32, {2, 2}, &table);
  } else {
    args.k_cache = a.tensor(t, {2, 16, 2, 64});
    args.v_cache = a.tensor(t, {2, 16, 2, 64});
  }
  args.cache_seqlens = a.tensor(DType::int32, {2}, &seqlens);
  args.k_new = a.tensor(t, {2, 1, 2, 64});
  args.v_new = a.tensor(t, {2, 1, 2, 64});
  if (rotary) {
    args.rotary_cos = a.tensor(t, {16, 32});
    args.rotary_sin = a.tensor(t, {16, 32});
  }
  args.out = a.tensor(t, {2, 1, 2, 64});
  args.lse = a.tensor(DType::float32, {2, 2, 1});
  ExecutionContext ctx;
  ctx.backend = backend;
  return select_kernel(args, ctx, choice);
}

Status combine_support(Backend backend, KernelChoice* choice) {
  Arena a{device_for(backend), {}};
  CombineArgs args;
  args.out_partial = a.tensor(DType::float32, {3, 1, 4, 2, 64});
  args.lse_partial = a.tensor(DType::float32, {3, 1, 4, 2});
  args.out = a.tensor(DType::float16, {1, 4, 2, 64});
  args.lse = a.tensor(DType::float32, {1, 4, 2});
  ExecutionContext ctx;
  ctx.backend = backend;
  return select_kernel(args, ctx, choice);
}

// Why a backend cannot be asked at all, or "" when it can.
std::string unavailable(Backend backend) {
  if (!backend_compiled(backend)) return "not compiled";
  if (is_cuda(backend) && cuda_device_count() == 0) return "no GPU";
  return "";
}

}  // namespace

int info_command() {
  std::cout << "flashattn " << version() << "\n\nbackends compiled:";
  for (Backend b : kAllBackends) {
    if (backend_compiled(b)) std::cout << " " << backend_name(b);
  }
  std::cout << "\n";
  for (Backend b : kAllBackends) {
    if (!backend_compiled(b)) std::cout << "not compiled:      " << backend_name(b) << "\n";
  }

  const int devices = cuda_device_count();
  std::cout << "\nCUDA devices: " << devices;
  if (devices == 0) {
    std::cout << (FLASHATTN_WITH_CUDA ? " (none visible to the driver)" : " (built without CUDA)");
  }
  std::cout << "\n";
  for (int i = 0; i < devices; ++i) {
    CudaDeviceInfo d;
    if (Status st = cuda_device_info(i, &d); !st.ok()) {
      std::cout << "  " << i << ": " << st.message() << "\n";
      continue;
    }
    std::cout << "  " << i << ": " << d.name << ", sm_" << d.compute_capability << ", " << d.multiprocessors
              << " SMs, " << fixed(static_cast<double>(d.memory_bytes) / (1ull << 30), 1) << " GiB\n";
  }

  // Rows: a feature; columns: backends. Each cell asks select_kernel.
  struct Probe {
    std::string name;
    std::function<Status(Backend, KernelChoice*)> ask;
  };
  auto problem = [](const Feature& f) {
    return [f](Backend b, KernelChoice* c) {
      ProblemSpec s = base_problem();
      f(s);
      s.resolve();
      return query_support(make_host_problem(s), b, c);
    };
  };
  const std::vector<Probe> probes{
      {"forward fp16", problem([](ProblemSpec&) {})},
      {"forward bf16", problem([](ProblemSpec& s) { s.dtype = DType::bfloat16; })},
      {"forward fp32", problem([](ProblemSpec& s) { s.dtype = DType::float32; })},
      {"head dim 32", problem([](ProblemSpec& s) { s.head_dim = 32; })},
      {"head dim 72 (not pow2)", problem([](ProblemSpec& s) { s.head_dim = 72; })},
      {"head dim 256", problem([](ProblemSpec& s) { s.head_dim = 256; })},
      {"head dim 512", problem([](ProblemSpec& s) { s.head_dim = 512; })},
      {"d 192, dv 128", problem([](ProblemSpec& s) { s.head_dim = 192, s.head_dim_v = 128; })},
      {"GQA / MQA", problem([](ProblemSpec& s) { s.heads = 4, s.heads_kv = 1; })},
      {"seqlen_q != seqlen_k", problem([](ProblemSpec& s) { s.seqlen_k = 13; })},
      {"causal", problem([](ProblemSpec& s) { s.causal = true; })},
      {"sliding window", problem([](ProblemSpec& s) {
         s.window = {3, 0};
       })},
      {"softcap", problem([](ProblemSpec& s) { s.softcap = 30.f; })},
      {"ALiBi", problem([](ProblemSpec& s) { s.alibi = true; })},
      {"dropout", problem([](ProblemSpec& s) { s.dropout = 0.1f; })},
      {"learnable sink", problem([](ProblemSpec& s) { s.sink = true; })},
      {"bias / mask tensor", problem([](ProblemSpec& s) { s.key_padding = true; })},
      {"varlen", problem([](ProblemSpec& s) { s.varlen = true; })},
      {"paged KV, page 16", problem([](ProblemSpec& s) { s.page_size = 16; })},
      {"paged KV, page 1", problem([](ProblemSpec& s) { s.page_size = 1; })},
      {"KV cache + append", [](Backend b, KernelChoice* c) { return kvcache_support(b, false, false, c); }},
      {"KV cache + rotary", [](Backend b, KernelChoice* c) { return kvcache_support(b, false, true, c); }},
      {"paged KV cache", [](Backend b, KernelChoice* c) { return kvcache_support(b, true, false, c); }},
      {"split-KV combine", [](Backend b, KernelChoice* c) { return combine_support(b, c); }},
      {"backward fp16", problem([](ProblemSpec& s) { s.backward = true; })},
      {"backward bf16", problem([](ProblemSpec& s) { s.backward = true, s.dtype = DType::bfloat16; })},
      {"backward head dim 256", problem([](ProblemSpec& s) { s.backward = true, s.head_dim = 256; })},
      {"backward (d, dv) = (192, 128)",
       problem([](ProblemSpec& s) { s.backward = true, s.head_dim = 192, s.head_dim_v = 128; })},
      {"backward deterministic", problem([](ProblemSpec& s) { s.backward = true, s.deterministic = true; })},
      {"backward d256 deterministic",
       problem([](ProblemSpec& s) { s.backward = true, s.head_dim = 256, s.deterministic = true; })},
      {"backward causal+window", problem([](ProblemSpec& s) {
         s.backward = true, s.causal = true, s.window = {3, -1};
       })},
      {"backward softcap", problem([](ProblemSpec& s) { s.backward = true, s.softcap = 30.f; })},
      {"backward ALiBi", problem([](ProblemSpec& s) { s.backward = true, s.alibi = true; })},
      {"backward dropout", problem([](ProblemSpec& s) { s.backward = true, s.dropout = 0.1f; })},
      {"backward sink", problem([](ProblemSpec& s) { s.backward = true, s.sink = true; })},
      {"backward bias / mask tensor",
       problem([](ProblemSpec& s) { s.backward = true, s.key_padding = true; })},
      {"backward varlen", problem([](ProblemSpec& s) { s.backward = true, s.varlen = true; })},
  };

  std::vector<Table::Column> columns{{"feature (fp16 unless named)"}};
  for (Backend b : kAllBackends) columns.push_back({backend_name(b)});
  Table table(columns);
  std::map<std::string, int> reasons;  // distinct "no" reasons, numbered for footnotes
  std::vector<std::string> reason_list;
  for (const Probe& probe : probes) {
    std::vector<std::string> row{probe.name};
    for (Backend b : kAllBackends) {
      if (std::string why = unavailable(b); !why.empty()) {
        row.push_back("- (" + why + ")");
        continue;
      }
      KernelChoice choice;
      Status st;
      try {
        st = probe.ask(b, &choice);
      } catch (const std::exception& e) {
        st = Status::error(ErrorCode::internal, "%s", e.what());
      }
      if (st.ok()) {
        row.emplace_back("yes");
        continue;
      }
      const std::string why = st.message();
      auto [it, inserted] = reasons.emplace(why, static_cast<int>(reason_list.size()) + 1);
      if (inserted) reason_list.push_back(why);
      row.push_back("no [" + std::to_string(it->second) + "]");
    }
    table.add_row(row);
  }
  std::cout << "\nWhat each backend supports (each cell is select_kernel's answer for a small problem):\n\n";
  table.print(std::cout);
  if (!reason_list.empty()) {
    std::cout << "\n";
    for (std::size_t i = 0; i < reason_list.size(); ++i)
      std::cout << "[" << i + 1 << "] " << reason_list[i] << "\n";
  }
  return 0;
}

}  // namespace flashattn::cli
