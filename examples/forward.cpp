// The README's C++ example: a causal attention forward on the CPU through the
// public API, with the caller owning every buffer (the workspace included).
#include <flashattn/flashattn.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  using namespace flashattn;
  const std::int64_t b = 2, s = 256, h = 8, d = 64;  // batch, seqlen, heads, head dim

  // Inputs and output, row-major (b, s, h, d). fp32 here; fp16/bf16 work the same way.
  std::vector<float> q(b * s * h * d), k(q.size()), v(q.size()), out(q.size());
  for (std::size_t i = 0; i < q.size(); ++i) {
    q[i] = std::sin(0.1f * i), k[i] = std::cos(0.3f * i), v[i] = std::sin(0.7f * i + 1.f);
  }
  std::vector<float> lse(b * h * s);  // optional: log-sum-exp of each row, (b, h, s)

  ForwardArgs args;
  args.q = TensorView::contiguous(q.data(), DType::float32, {b, s, h, d});
  args.k = TensorView::contiguous(k.data(), DType::float32, {b, s, h, d});
  args.v = TensorView::contiguous(v.data(), DType::float32, {b, s, h, d});
  args.out = TensorView::contiguous(out.data(), DType::float32, {b, s, h, d});
  args.lse = TensorView::contiguous(lse.data(), DType::float32, {b, h, s});
  args.options.causal = true;

  ExecutionContext ctx;  // Backend::automatic: the fastest backend for the tensors' device

  // The library allocates nothing: ask how much scratch the call needs, then provide it
  // (256-byte aligned).
  std::size_t bytes = 0;
  if (Status st = workspace_size(args, ctx, &bytes); !st.ok()) {
    std::fprintf(stderr, "workspace_size: %s\n", st.message());
    return 1;
  }
  struct alignas(256) Block {
    std::byte bytes[256];
  };
  std::vector<Block> workspace((bytes + sizeof(Block) - 1) / sizeof(Block));
  ctx.workspace = workspace.data();
  ctx.workspace_bytes = bytes;

  KernelChoice choice;
  select_kernel(args, ctx, &choice);  // which backend and kernel will run, and why
  if (Status st = forward(args, ctx); !st.ok()) {
    std::fprintf(stderr, "forward: %s: %s\n", error_code_name(st.code()), st.message());
    return 1;
  }
  std::printf("ran %s: out[0] = %.6f, lse[0] = %.6f\n", choice.kernel, out[0], lse[0]);

  // Errors are values naming the argument and its values; nothing throws or aborts.
  args.v = TensorView::contiguous(v.data(), DType::float32, {b, s, h / 2, d});
  const Status bad = forward(args, ctx);
  std::printf("a bad call: %s: %s\n", error_code_name(bad.code()), bad.message());
  return bad.ok() ? 1 : 0;
}
