// The CPU reference backend: the float64 oracle every other backend is tested against.
//
// It computes each query row's whole score row in double, straight from the definitions in
// flashattn/attention.h (no tiling, no online softmax), so that what it returns *is* the
// semantics. Its functions (unsupported_reason / workspace_size / run) are declared in
// backend.h; this header adds what only tests and tools need.
//
// Choices the oracle makes, which every backend is measured against:
//   * Forward: S in double; softcap, ALiBi, mask, sink, softmax in double; LSE and out rounded
//     once at the end (LSE to fp32, out to p.dtype). A row with no visible key: out 0, LSE -inf
//     (LSE = sink with a sink). Dropout scales kept P by 1/(1-p); the denominator and LSE never
//     see dropout (as in FlashAttention 2). ALiBi follows the formula -slope * |i + sk - sq - j|
//     for causal masks too, so the LSE includes the row constant FA2's causal kernel drops.
//   * KV cache with k_new: the append (rotated, rounded to the cache dtype) completes for every
//     sequence before any attention row is computed. Rotary is evaluated in double from the
//     dtype tables and rounded once to p.dtype, for k_new rows as stored and for q as used.
//   * Backward: the exact gradient of the function the backward computes from what it is
//     handed: P_ij = exp(S_ij - LSE_i) and D_i = dO_i . O_i with the forward's LSE and output
//     from BackwardParams when given (every real backward uses exactly these, and the rounding
//     of O to the input dtype then feeds dP - D, which P near 1 amplifies: an oracle that
//     recomputed O would charge that input rounding to the backend under test). When lse or
//     out is null they are recomputed in double (with dropout, O is the dropped-out output).
//     dq/dk/dv rows of a sequence beyond its used length (seqused) are zeroed. Paged or
//     KV-cache backward is not defined and is reported unsupported.
//   * Combine: log-sum-exp of the split LSEs in double.
#pragma once

#include "backend.h"
#include "common/params.h"
#include "flashattn/attention.h"

namespace flashattn::detail::cpu_reference {

// The same computation with the rounding of a low-precision implementation, for the tolerance
// rule  max|out - ref| <= 2 * max|ref_lowp - ref| + atol  (ref_lowp = run_emulated with
// precision = the input dtype). Arithmetic is float (never double) and, with `rnd` rounding a
// float to `precision` (identity for float32, so precision float32 is plain float math):
//   forward:  S = rnd(scale * (q.k accumulated in float)); with softcap S = rnd(c*tanh(S/c));
//             with ALiBi S = rnd(S + bias); softmax in float; P = rnd(P) after normalisation;
//             with dropout P~ = rnd(P * keep / (1-p)); O accumulated in float, then rnd(O); LSE float.
//   backward: P = rnd(exp(S - LSE)) and D = sum dO*O in float, from the given LSE and output
//             like the exact backward (recomputed in float, O rounded, when not given); dP = rnd(dO.v [*
//             keep/(1-p)]); dS = rnd(P(dP - D)); with softcap dS = rnd(dS * (1 - tanh^2)); dq, dk, dv
//             accumulated in float and rounded with rnd before the store; dsink in float.
// Uses the same workspace as run (workspace_size). The KV-cache append is identical to run's,
// so running both on one cache writes the same values twice.
Status run_emulated(const AttentionParams& p, const ExecutionContext& ctx, DType precision) noexcept;
Status run_emulated(const BackwardParams& p, const ExecutionContext& ctx, DType precision) noexcept;

}  // namespace flashattn::detail::cpu_reference
