// Compile-time shape of one Hopper forward kernel instantiation: tile sizes,
// pipeline depth, warp roles, register split and the shared-memory layout, all
// derived here from (head dim, element type) so the kernel pieces only read them.
//
// Roles: warpgroup 0 is the producer (one thread issues every TMA load), the
// others are consumers, each owning 64 of the tile's kBlockM query rows (one
// wgmma M of 64): two (kBlockM 128), or three at d = 64 for long sequences
// (kBlockM 192: a warpgroup's GEMMs are short there, and two others' batches
// cover one's softmax better; see use_three_consumers), or four at d = 64 from 512
// queries (kBlockM 256, 64-key blocks: use_d64_alt_tile). The consumers take turns
// issuing their GEMMs ("ping-pong", a rotation with three or four) so one's softmax
// runs while the others' GEMMs keep the tensor cores busy. Decoding (at most 64 query
// rows per head or packed GQA group) runs one consumer (kBlockM 64: use_single_consumer).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "common/host_device.h"
#include "cuda/sm90/named_barriers.h"
#include "cuda/sm90/split_kv_plan.h"

// Smallest dv whose kernels rescale O conditionally (kConditionalRescale below);
// settable for measurement builds only.
#ifndef FLASHATTN_SM90_CONDITIONAL_RESCALE_MIN_DV
#define FLASHATTN_SM90_CONDITIONAL_RESCALE_MIN_DV 128
#endif

// The key block width of the three-consumer d = 64 kernel (use_three_consumers; 192-row tiles, 160 registers
// per consumer thread; FlashAttention 3's d64 tile is 192 x 128 too). 96 from session 4, when 128 spilled in
// the main loop; with nvcc 13.0 and session 14's kernel 128 compiles with no spills in the loop (the kernel's
// 2 LDL/STL as with 96) and no C75xx. Measured on an H200 (bench/integration/s14_d64n128.sh, three passes,
// cuDNN and a control in the same process): non-causal 8k / 16k +3.3 / +3.5% (every reading of 128 above
// every reading of 96 and its control; 4k, which runs the four-consumer kernel, 0.991 against the control's
// 0.993). Settable for measurement builds only.
#ifndef FLASHATTN_SM90_D64_THREE_BLOCK_N
#define FLASHATTN_SM90_D64_THREE_BLOCK_N 128
#endif

// d = 128 with long key sequences (use_long_key_blocks): the key block width (0 = never
// wider than 128: the default, the wider block measured neutral within noise on an H200,
// docs/performance-sm90.md session 4) and the shortest key length that gets it, unmasked
// and masked (causal or windowed). Settable for measurement builds only.
#ifndef FLASHATTN_SM90_LONG_KEY_BLOCK_N
#define FLASHATTN_SM90_LONG_KEY_BLOCK_N 0
#endif
#ifndef FLASHATTN_SM90_LONG_KEY_MIN_SEQLEN
#define FLASHATTN_SM90_LONG_KEY_MIN_SEQLEN 2048
#endif
#ifndef FLASHATTN_SM90_LONG_KEY_MIN_SEQLEN_MASKED
#define FLASHATTN_SM90_LONG_KEY_MIN_SEQLEN_MASKED 8192
#endif
// Kernels whose d and dv are both at most this fold the softmax's per-block row maxima
// and sums as balanced trees (softmax.h softmax_update kTree); 0 = none, 256 = all.
// 128: d 64, 96 (the d 128 kernel) and 128, where it was measured and GPU-tested
// (2026-11-22, sm90d); d >= 192 and the large-V kernels were not run with it.
#ifndef FLASHATTN_SM90_TREE_REDUCTIONS_MAX_D
#define FLASHATTN_SM90_TREE_REDUCTIONS_MAX_D 128
#endif
// 1: a consumer issues the next tile's first S GEMM before it writes the current tile's
// O (consumer.h kEarlyNextS); 0: after. 2: as 1, and the next tile is received (index,
// Q, decoding) while the current tile's last P V GEMM runs (kEarlyNextTile). Only where O
// has its own buffer. Default 1: measured on an H200 (2026-11-22, sm90e, two runs) 0.999-1.11x
// of 0 on the 24 d 64 / d 128 rows of the standard grid (47 of 48 above 1). 2: -0.4 / -1.7%
// against 1 at <= 1k keys, +2% at >= 2k (one run); a measurement variant.
#ifndef FLASHATTN_SM90_EARLY_NEXT_S
#define FLASHATTN_SM90_EARLY_NEXT_S 1
#endif
// 1 (default): the d = dv = 128 two-consumer kernels compute S = Q K^T with Q as the wgmma's register operand
// (A fragments loaded once per tile by ldmatrix: consumer.h load_q_fragments) instead of reading it from
// shared memory at every k-step: a third of the S GEMM's shared-memory operand bytes, and energy per FLOP is
// what sets the H200's clock under sustained load (session 15). Session 7 (helper sm90w, an earlier form) had
// read -2.2% cycles under ncu's locked clocks and nothing at free clocks within that timing's 4-6% spread.
// Session 34 (bench/integration/s34_rq.sh, s34_rq2.sh: 400 ms stints with cuDNN interleaved, two passes per
// call, against the mean of the tree and a control copy of it; first call, second call): d128 non-causal 512
// -, 1.004; 1k 0.986, 1.002; 2k 1.009, 1.010; 4k 1.010, 1.003; 8k 1.013, -; 16k 1.006, 0.997; causal 512
// -, 1.005; 1k -, 1.001; 2k 0.997, 1.005; 4k 1.017, 1.029; 8k 1.012, 0.999; 16k 1.007, -: 15 of 19 above 1,
// mean +0.6%. The paged instances too (KV-cache prefill over a block table; their consumers have 232
// registers, and ptxas adds no local-memory access): session 35 (s35_paged_rq.sh, bench/decode_ab.py, three
// passes against the mean of the tree and a control copy, whose ratio spread 0.97-1.05 there) read b4 x 4k
// page 256 non-causal 1.035 / 1.053 / 1.024, causal 1.022 / 0.982 / 1.014, GQA 8k page 64 causal 1.012 /
// 0.999 / 1.012. 0: Q from shared memory.
#ifndef FLASHATTN_SM90_REGISTER_Q
#define FLASHATTN_SM90_REGISTER_Q 1
#endif
// The masked instances of the d = dv = 256 two-consumer kernels (causal and windowed problems): the first
// this many of the S GEMM's 16 k-steps with Q's fragments in registers (0, 4 or 8: whole 64-column chunks);
// all 16 (64 registers) cannot fit beside O's 128. Local SASS (nvcc 13.0): 4 adds no local-memory access to
// the masked kernels (2-4 LDL / STL as without) but 9 -> 26 to the unmasked 80-key one, hence masked only; 8
// adds 10-16 to every kernel. Measured with 4 (bench/integration/s34_rq256.sh, 400 ms stints, two passes,
// against the mean of the tree and a control copy): causal 1k / 2k / 4k / 8k / 16k 0.997 / 1.000 / 0.983 /
// 0.982 / 1.016; 4k, the row furthest below the FA3 anchor, lost in both passes. Off (0).
#ifndef FLASHATTN_SM90_REGISTER_Q_D256
#define FLASHATTN_SM90_REGISTER_Q_D256 0
#endif
// Measured, not kept (session 40; code in 64c54e6): REGISTER_Q_D256's 4 k-steps in the unmasked single-CTA d
// = dv = 256 kernels (O over V), whose key-block loops keep 0 LDL / STL with it (tile loop 9 -> 26; 8 k-steps
// put 12 in the 80-key loop). Outputs bitwise equal; d256 suites, racecheck and synccheck on the reduced grid
// clean. Against the tree (400 ms stints beside cuDNN, a control copy of the tree): s40_rq256.sh, two passes,
// non-causal 512 / 1k / 2k / 4k / 8k / 16k 1.006 / 1.000 / 0.995 / 0.991 / 1.019 / 1.021 (control 0.998
// / 1.004 / 0.997 / 0.990 / 1.012 / 0.997); s40_rq256b.sh, three passes, 1k-16k 0.994 / 0.996 / 1.010 / 1.012
// / 1.008 (control 0.987 / 1.006 / 1.011 / 1.011 / 1.009): within the control.
//
// 1 (default): Q's fragments in registers for all 12 k-steps of the S GEMM in the (192, 128) two-consumer
// kernels too (DeepSeek-style prefill), where the S GEMM is 60% of the tensor work. Session 35
// (bench/integration/s35_rq192.sh, 400 ms stints with cuDNN interleaved, two passes, against the tree and a
// control copy whose ratio read 0.967-1.008): non-causal 1k / 2k / 4k / 8k / 16k 1.008 / 1.033 / 1.043
// / 1.030 / 1.026, causal 1.016 / 1.038 / 1.028 / 1.012 / 1.011. 0: Q from shared memory. Not at d = dv =
// 192, where 12 fragments spill (local SASS, nvcc 13.0: 4 -> 12 / 24 LDL / STL) and the first 8 read 1.019 /
// 0.997 at non-causal / causal 4k (s35_rq192.sh) but 0.967 / 0.985 / 0.985 / 0.999 non-causal 1k / 2k / 8k /
// 16k and 0.992 / 0.990 / 1.023 / 0.987 causal (s35_rq192b.sh, against the mean of the switch off and its
// control): a part of Q's k-steps from registers and the rest from shared memory lost at d256 too
// (REGISTER_Q_D256 above). The d = dv = 64 kernels are not offered it: with their 4 k-steps in registers the
// three- and four-consumer kernels spill (2 -> 38 LDL / STL).
#ifndef FLASHATTN_SM90_REGISTER_Q_D192
#define FLASHATTN_SM90_REGISTER_Q_D192 1
#endif
// Key blocks wider than this rebuild Q's descriptors per block (kRebuildQDescriptors).
#ifndef FLASHATTN_SM90_KEEP_Q_DESCRIPTORS_MAX_BLOCK_N
#define FLASHATTN_SM90_KEEP_Q_DESCRIPTORS_MAX_BLOCK_N 160
#endif

// Two shortenings of a d = 64 consumer warp's path from a key block's S to its P (helper
// sm90h, session 5; docs/performance-sm90.md), each a switch per kernel family: the
// two-consumer kernels (FLASHATTN_SM90_..., every head dim for the mask range) and the
// three-consumer d 64 kernels (FLASHATTN_SM90_..._THREE).
//  - ROW_SUM_MMA (kernels with dv = 64): the softmax row sums on the tensor cores. The P V GEMM
//    is m64n72k16, its last 8 columns multiply P by a constant block of ones in shared memory,
//    so l = P 1 comes out of the accumulator (rescaled with O, and from the same rounded P as
//    the numerator) and the per-score FADD tree of softmax.h disappears.
//  - TILE_MASK_RANGE: which key blocks need the score mask is decided once per tile
//    (score_mask.h unmasked_blocks) instead of per block (block_needs_mask), whose chain of
//    dependent integer operations sat between each block's S and its softmax.
// Measured on an H200 (2026-11-22, two runs, cuDNN beside): both on, the three-consumer kernel
// +5.7..7.1% on its four rows of the standard grid (ncu at 8192 keys: -9.6% kernel time, 16%
// fewer instructions), so on there by default; the two-consumer d 64 kernel -3% (ncu +4.6%:
// fewer instructions, each warp waits longer) and d 128 (mask range) neutral, so off there (the mask range
// on for d 128 since session 23: below).
#ifndef FLASHATTN_SM90_ROW_SUM_MMA
#define FLASHATTN_SM90_ROW_SUM_MMA 0
#endif
#ifndef FLASHATTN_SM90_ROW_SUM_MMA_THREE
#define FLASHATTN_SM90_ROW_SUM_MMA_THREE 1
#endif
// The four-consumer d 64 kernel (use_d64_alt_tile, session 9) took ROW_SUM_MMA_THREE's value until session
// 14, whose A/B (s14_d64n128.sh) showed the two kernels want different values: with the row sums in the
// softmax the three-consumer kernel at 128-key blocks read +1% over the sums on the tensor cores at 8k / 16k
// while the four-consumer kernel lost 4.4% at 4k. Its own switch, same default as before. ROW_SUM_MMA_THREE=0
// alone (session 15, s15_first.sh / s15_ncu.sh, four passes): 8k +1.1 / -0.1%, 16k +2.1 / +1.8% against a
// control at +0.3 / +0.7% and -1.0 / +3.3%: not separable from noise, so THREE stays 1.
#ifndef FLASHATTN_SM90_ROW_SUM_MMA_FOUR
#define FLASHATTN_SM90_ROW_SUM_MMA_FOUR 1
#endif
// The row maxima off the key-block loop's common path (softmax.h softmax_update_by_sum; session 13):
// 0 off, 1 the d = dv = 128 and d = dv = 256 kernels (d = 96 problems run the d 128 ones too), 2 every
// kernel with the conditional rescale (dv >= 128, sums in the softmax).
// Measured on an H200 (docs/performance.md, session 13; same-process A/Bs with a control): d128 +1-7% from
// 1k keys (most readings 3-6%), causal or not, 512 within noise; d256 +0.5% beyond the control on average
// (0.96-1.04 per row), so not there by default then. Session 23 (s23_next.sh, three passes beside a control)
// read d256 +0.9% over the default (control +0.2%), the second small positive reading, and its suites and
// racecheck pass: 1 takes the d = dv = 256 kernels in since then.
#ifndef FLASHATTN_SM90_RESCALE_BY_SUM
#define FLASHATTN_SM90_RESCALE_BY_SUM 1
#endif
// The d = dv = 128 two-consumer kernels' row sums on the tensor cores (kRowSumFused, session 22): the P V
// GEMM is m64n136k16, whose third 64-column chunk of B is a 16 KB block of ones kept after each V stage's
// two chunks (+32 KB of shared memory, which d = 128 has: 224 KB of 227), so the loop loses the row sums'
// FADD trees (~64 of ~376 instructions per key block and warp) for 6% more P V tensor work.
// softmax_update_by_sum's trigger becomes a bit test of the packed probabilities (softmax.h
// some_probability_large), taken against the references shifted by kProbabilityShift so that it fires
// where the sum trigger did (a probability past 2^8), not at 2.
// Measured on an H200 (docs/performance.md, session 22; s22_rowsum*.sh, five passes beside a control):
// +1.2% over the d128 rows on average (+1.5-2.3% at 16k, causal or not; 512 within noise), control 1.00.
// Not kept: the sums from a separate m64n8k16 GEMM per P V step (session 21's form): 0.975 with the
// shifted trigger (0.82 in session 21 with the unshifted one, which sends ~21% of random rows' blocks
// down the exact way).
// Session 41 (s41_rowsum.sh, 400 ms stints with cuDNN interleaved, three passes; session 22 timed in the same
// process, which hides the energy effect): 0 (the sums in the softmax) read non-causal 2k / 4k / 8k / 16k
// 0.973 / 0.974 / 0.980 / 0.994 and causal 4k / 8k / 16k 0.983 / 0.981 / 0.982 of 1 (control 0.993-1.023):
// the fused form holds under the power limit.
#ifndef FLASHATTN_SM90_ROW_SUM_D128
#define FLASHATTN_SM90_ROW_SUM_D128 1
#endif
// The d = dv = 64 kernels with the conditional rescale and softmax_update_by_sum (kBySumD64, session 22): no
// row maxima and no O rescale on the common path (~64 FMNMX, the quad shuffles and dv / 2 + 4 multiplications
// per block and thread at 128 keys) for a vote and the trigger: the partial sums where they are in the
// softmax (the two-consumer kernel), the shifted bit test where they are on the tensor cores (three and four
// consumers; the combination the bit test made possible). (The conditional rescale alone, with the maxima
// every block, was 3.5% slower at d 64 in session 3.)
// Measured on an H200 (docs/performance.md, session 22; s22_bysum64.sh, three passes beside a control):
// +8..+14% on the non-causal d64 rows, +5..+11% causal from 1k, causal 512 0.996 (control 0.998); with the
// four-consumer kernel left out, only the three-consumer rows (non-causal 8k / 16k, +12%) moved.
#ifndef FLASHATTN_SM90_RESCALE_BY_SUM_D64
#define FLASHATTN_SM90_RESCALE_BY_SUM_D64 1
#endif
// TILE_MASK_RANGE for the two-consumer kernels: 0 off, 1 the d = dv = 128 kernels, 2 every two-consumer
// kernel. Neutral at d 128 in session 5 (the loop then ~60 instructions longer); on session 22's kernels
// the per-block decision (block_needs_mask, a chain of dependent integer operations between the last P V
// issue and the softmax branch) ran ~46 instructions per block on the causal path and ~30 non-causal, the
// per-tile range ~20 on both. Measured on an H200 (session 23, s23_next.sh, three passes beside a
// control): d128 causal +1.1..+2.6% over the default at every length (control 1.00..1.02; +1.0% over
// the control on average), non-causal 0.95..1.02 (512 bimodal in all three builds), so on for d 128.
// Session 41 (s41_tmr.sh, 400 ms stints with cuDNN interleaved, three passes): 2 against 1 at d256 causal 1k
// / 2k / 4k 0.993 / 0.999 / 0.987 beside a control copy at 0.991 / 0.998 / 0.978; outputs bitwise equal.
#ifndef FLASHATTN_SM90_TILE_MASK_RANGE
#define FLASHATTN_SM90_TILE_MASK_RANGE 1
#endif
#ifndef FLASHATTN_SM90_TILE_MASK_RANGE_THREE
#define FLASHATTN_SM90_TILE_MASK_RANGE_THREE 1
#endif

// The tile boundary (helper sm90s, session 6: short sequences; docs/performance-sm90.md,
// "Session 6, helper sm90s"). Five switches, each 0 (the session-5 code) or 1:
//  - EARLY_DECODE: a consumer decodes the next tile (tile_work, key_block_range) as soon as it has
//    its index and only then waits for its Q, so the decode runs while Q lands instead of after.
//  - FAST_DIVISION: tile_work's four integer divisions (consumers and producer, once per tile) as
//    multiply-high + shift by constants the host computes (fast_division.h). No longer a switch since
//    session 10 (tile_sections.h decodes with them only).
//  - STMATRIX_O: the epilogue writes O to shared memory with stmatrix (four 8x8 matrices per
//    instruction: kHeadDimV / 16 per thread instead of kHeadDimV / 4 st.shared.b32, and one
//    swizzled address per 16 columns instead of per 8 columns and row).
//  - FAST_FINALIZE: the final normalisation's 1 / sum and log2(sum) with rcp.approx / lg2.approx
//    (relative error ~2^-23, below fp32 accumulation noise) instead of IEEE division and logf.
//  - FIRST_K_BEFORE_Q: the (dense) producer loads a tile's first K block before its Q instead of
//    after it (producer.h), so that K no longer arrives behind Q at the tile's first S. 1: the single-CTA
//    kernels and the masked K/V multicast instances (session 24, ForwardConfig kFirstKBeforeQ); 2: every
//    instance.
// Measured on an H200 (2026-11-22, two runs, cuDNN and a control build in the same process): the
// first four together 1.02-1.04x at <= 1k keys (d 64, d 128), 1.00 at >= 2k; with FIRST_K_BEFORE_Q
// 1.03-1.12x on the six s = 512 rows (d 64 / 128 / 256, causal or not), 1.00 at >= 2k; executed
// instructions at d128 s512 -14%. All on by default.
#ifndef FLASHATTN_SM90_EARLY_DECODE
#define FLASHATTN_SM90_EARLY_DECODE 1
#endif
#ifndef FLASHATTN_SM90_STMATRIX_O
#define FLASHATTN_SM90_STMATRIX_O 1
#endif
#ifndef FLASHATTN_SM90_FAST_FINALIZE
#define FLASHATTN_SM90_FAST_FINALIZE 1
#endif
#ifndef FLASHATTN_SM90_FIRST_K_BEFORE_Q
#define FLASHATTN_SM90_FIRST_K_BEFORE_Q 1
#endif
// Session 28 (s28_oov*.sh): where O has no buffer of its own (d >= 192) it reuses Q's rows,
// so the next tile's Q may land only once the TMA store has read this tile's O, and the next tile's first S
// waits for the epilogue, the store and a Q load in turn: about two key blocks per tile at d = 256. O_OVER_V
// puts each consumer's 64 rows of O over a V stage instead (ForwardConfig kOOverV): the O stores take two
// uses of the V ring at every tile boundary (SharedPipeline, producer give_output_slots), Q is free after the
// tile's last S GEMM as with a separate O, and the next tile's first S is issued before the epilogue
// (kEarlyNextS). The next tile's first two V loads then wait for the two O stores instead, and the producer
// issues each K one block ahead of its V (producer_loop). Single-CTA kernels with two stages and two
// consumers only (under K/V multicast the partner CTA writes the V stages too), and unmasked problems only:
// masked ones launch a masked instance without it (forward_launch.h), since paired timing read causal d256 1k
// / 2k / 4k at 0.990 / 0.990 / 0.994 with it (s28_oov3.sh; non-causal 512 / 1k / 2k / 4k 1.044 / 1.021
// / 1.010 / 1.005; s28_final.sh, the default against 0: non-causal 512..16k 1.045 / 1.023 / 1.010 / 1.006
// / 1.003 / 1.002). 0: off; 1 (default): d = dv = 256; 2: every kernel where O reuses Q's rows (d 192, (192,
// 128); masked problems included; not measured, not GPU-tested).
#ifndef FLASHATTN_SM90_O_OVER_V
#define FLASHATTN_SM90_O_OVER_V 1
#endif
// Session 28: K_LOOKAHEAD: the dense producer issues each key block's K before the
// previous block's V (ForwardConfig kKLookahead), so that a K never queues behind a V load waiting for its
// stage. The O-over-V kernels need that order (producer_loop) and have it whatever this says; there the
// switch from K, V per block to it moved d256 non-causal 512 / 1k from 1.014 / 1.014 to 1.044 / 1.021 of the
// old kernel (s28_oov2.sh against s28_oov3.sh, paired), which is why the other dense kernels may gain from it
// too. Session 29 (bench/integration/s29_klook.sh, paired, three passes, control within +-0.2%): every dense
// kernel with it against without: d256 causal 1k / 4k +1.27 / +0.47% (the 64-key kernels on placement
// clusters), d64 non-causal 512 / 1k +0.25 / +0.08%, d128 non-causal 512..4k -0.2..-0.7%, d128 causal
// -0.4..+0.3%; then (s29_d256.sh, the same protocol) d256 causal 1k / 4k +0.98 / +0.37% again, 8k / 16k
// (80-key blocks, K/V multicast) -0.13 / +0.05%, d64 causal 512 +0.39%, the other d64 rows -0.02..-0.23%. The
// gain is the masked 64-key d256 kernels' (D256_BLOCK64_MAX_SEQLEN_MASKED), whose tiles are short. 0: off; 1:
// the d = dv = 256 kernels with 64-key blocks (the unmasked ones have it through O over V); 2: every dense
// kernel.
#ifndef FLASHATTN_SM90_K_LOOKAHEAD
#define FLASHATTN_SM90_K_LOOKAHEAD 1
#endif
// Session 41 (s41_d256knobs.sh, 400 ms stints with cuDNN interleaved, three passes), K_LOOKAHEAD=0 and
// PREFETCH_NEXT_TILE=0 against the defaults at d256 causal 1k / 2k / 4k: 0.980 / 0.994 / 1.010 and 0.988 /
// 0.999 / 1.002 (control 0.999 / 1.005 / 1.007): both defaults hold where their paired readings put them.
// Session 29: PREFETCH_NEXT_TILE: the dense producer, once it has issued a tile's K/V loads (about kStages
// key blocks before the tile's end), has L2 fetch the next tile's Q, so that the Q load at the tile boundary
// hits L2 instead of DRAM. Not under packed GQA or per-sequence maps. Measured on an H200
// (bench/integration/s29_pf.sh, paired, control within 0.3%), Q in every dense kernel: d256 causal 1k / 4k
// +1.23 / +0.40% and d64 non-causal 512 +0.81% (the 64-key kernels: masked d256, four-consumer d64), d128
// -0.7..+0.5% (non-causal 512 -0.71%), d256 non-causal 512 / 1k -2.8 / -1.9% (O over V). Prefetching the
// tile's first K / V block too read d128 non-causal 512 / 1k -5.0 / -3.6% and d256 non-causal -4% (removed).
// Then (s29_pf2.sh, the same protocol) Q in the 64-key kernels without O over V only: d256 causal 512 / 1k /
// 2k / 4k +3.47 / +1.45 / +0.86 / +0.42%, d64 non-causal 512 +0.76% and 1k..8k +0.0..+0.1% (the four-consumer
// kernel), d64 causal 512..4k -0.33..+0.03% (its masked instance). Why the short masked d256 tiles gain most:
// a tile of a few 64-key blocks waits at its start for a Q that nothing else has read. 0: off; 1: the 64-key
// kernels without O over V except d64's masked instance (the masked d256 kernels up to
// D256_BLOCK64_MAX_SEQLEN_MASKED keys, the unmasked four-consumer d64 one) and, early (PREFETCH_EARLY below),
// the two-consumer d = dv = 128 kernels (not the decode one: not measured); 2: every dense kernel.
#ifndef FLASHATTN_SM90_PREFETCH_NEXT_TILE
#define FLASHATTN_SM90_PREFETCH_NEXT_TILE 1
#endif
// Session 30: PREFETCH_EARLY: the prefetch goes out after one of the tile's first key blocks' loads
// (PREFETCH_AFTER_BLOCKS below; measured first with the second) instead of after its last. Measured on an
// H200 (bench/integration/s30_pf_early.sh, paired, three passes, control within 0.25%), early against no
// prefetch in every dense kernel: d128 non-causal 512 / 1k / 4k +2.28 / +1.28 / +0.34%, causal 512 / 1k +1.20
// / -0.13% (late there: -0.76 / +0.25 / +0.26%, +0.95 / -0.14%); d256 O over V non-causal 512 / 1k -1.95 /
// +0.40% (late -3.3 / -1.8%); the masked d256 64-key kernels causal 512 / 1k / 4k -4.7 / -2.2 / -1.0% against
// late; d64 non-causal 512 -0.9% against late. So the timing is what costs: beside the tile's last loads the
// prefetch competes with the next Q and (O over V) the O stores, while in the short masked d256 tiles two
// blocks in is already too late to matter more than the last loads. With it the producer (24 registers)
// spills a few bytes more (the next tile's decode between two key-block loops, below). 0:
// after the tile's loads wherever PREFETCH_NEXT_TILE is on; 1: early in the two-consumer d = dv = 128
// kernels; 2: early wherever it is on.
#ifndef FLASHATTN_SM90_PREFETCH_EARLY
#define FLASHATTN_SM90_PREFETCH_EARLY 1
#endif
// Where PREFETCH_EARLY applies: the key block (counted from the tile's first loaded) after whose loads the
// prefetch goes out, for problems without and with a window (causal included; a run-time choice, the d128
// kernel below 8k keys serves both), and the most keys for which a windowed problem prefetches early at all
// (0: no limit). Measured (bench/integration/s30_d128_early.sh, paired, three passes, control within 0.2% but
// causal 512's 0.5%), against no prefetch: d128 non-causal 512 / 1k / 2k / 4k / 16k after the first block
// +2.83 / +2.13 / +0.69 / +0.43 / -0.01%, the second +2.72 / +1.69 / +0.56 / +0.33 / -0.07%, the third +2.54
// / +0.37 / +0.07 / +0.26 / -0.06%; causal 512 / 1k / 2k / 4k / 16k after the first +1.05 / -0.44 / -0.72 /
// -0.41 / -0.65%, the second +1.78 / +0.06 / -0.44 / -0.28 / -0.36%, the third +1.96 / +0.67 / -0.29 / -0.26
// / -0.36% (16k: the masked multicast instance, left without the prefetch). A causal tile of a longer
// sequence gains nothing from its next Q in L2 and pays for the prefetch.
#ifndef FLASHATTN_SM90_PREFETCH_AFTER_BLOCKS
#define FLASHATTN_SM90_PREFETCH_AFTER_BLOCKS 1
#endif
#ifndef FLASHATTN_SM90_PREFETCH_AFTER_BLOCKS_WINDOWED
#define FLASHATTN_SM90_PREFETCH_AFTER_BLOCKS_WINDOWED 3
#endif
// The early prefetch splits the producer's key-block loop in two (producer.h). Session 30's first form, one
// loop that tested every block, read d128 causal 2k / 4k -1.2 / -0.5% with the windowed limit on, though
// nothing is prefetched there (s30_final.sh; the 24-register producer reloaded spilled values in the loop);
// the split form -0.15 / +0.02% (s30_split.sh). The one-loop form was removed afterwards.
// PREFETCH_O_OVER_V: the early prefetch (the loop split as above) in the O-over-V kernels (unmasked d256),
// after PREFETCH_AFTER_BLOCKS_O_OVER_V blocks. Session 31 (s31_oov_prefetch.sh, paired, three passes, control
// within +-0.3%), against none: after the second block non-causal 512 / 1k / 2k / 4k / 16k -2.2 / +0.70 /
// +0.46 / +0.01 / -0.03%, after the first -2.4 / -0.6 / -0.3 / -0.2 / -0.1%. 512 keys run the 64-key
// blocks, whose tiles read slower with any prefetch (session 30: late -3.3%, after the second block -2.0%),
// so the default leaves them out. 0: off; 1 (default): the O-over-V kernels of more than 64 keys per block
// (d256 non-causal from 513 keys); 2: every O-over-V kernel.
#ifndef FLASHATTN_SM90_PREFETCH_O_OVER_V
#define FLASHATTN_SM90_PREFETCH_O_OVER_V 1
#endif
#ifndef FLASHATTN_SM90_PREFETCH_AFTER_BLOCKS_O_OVER_V
#define FLASHATTN_SM90_PREFETCH_AFTER_BLOCKS_O_OVER_V 2
#endif
#ifndef FLASHATTN_SM90_PREFETCH_WINDOWED_MAX_SEQLEN
#define FLASHATTN_SM90_PREFETCH_WINDOWED_MAX_SEQLEN 1024
#endif
// The producer, which decodes every tile for its own loads, hands the consumers the decoded tile (WorkTile
// and key-block range, 48 bytes through the tile slot) instead of the index alone, so that the consumer warps
// do not each decode it again (~100 uniform-datapath instructions per warp and tile in the d128 cluster
// kernel's SASS, session 24). 0: never; 1: the d = dv = 64 kernels; 2: every kernel with dense K/V (the paged
// ones keep the index: forward_kernel.h). Measured on an H200 (session 25, bench/integration/s25_decoded.sh,
// paired timing, three passes, control within +-0.3%): d64 +0.2..+2.0% on every row (causal 512 +2.0%,
// non-causal 8k / 16k +1.4 / +1.5%); d128 -0.3..-3.2% (non-causal 512 / 1k -3.2 / -2.5%, causal 1k / 2k
// -2.2 / -1.8%); d256 within +-0.4%. Hence d64 only. Session 39 (s39_handoff.sh, 400 ms stints beside cuDNN,
// two passes, SPLIT_TAIL=0 in both builds: the tail assumes the consumer's own decoding): d128 non-causal 1k
// / 2k / 4k / 16k 0.984 / 1.008 / 1.017 / 1.007, causal 2k / 8k 0.988 / 1.001, control 0.983-1.026: no change
// there either.
#ifndef FLASHATTN_SM90_DECODED_HANDOFF
#define FLASHATTN_SM90_DECODED_HANDOFF 1
#endif

// 1: in the key-block loop, a block's mask decision, ring advance and releases are made while
// its S GEMM runs, the releases as predicated arrives (no warp-leader branch), and the score
// preparation (softcap, ALiBi, mask) sits behind one branch (consumer.h kEarlyBlockFlags);
// 0: the former order (a measurement variant). Measured on an H200 (2026-11-22, helper sm90L,
// docs/performance-sm90.md): d128 8k under ncu (locked clocks) -1.8% kernel time (2.017 ->
// 1.981 ms, tensor pipe 76.9 -> 78.3% active); same-process A/B at free clocks d128
// non-causal +1.3%, d64 +0.7%, d128 causal +0.2%, d256 -2.5% against base (+1.1 / +1.8 /
// +3.9 / +0.2% against the base's second copy), outputs bitwise equal on every row.
#ifndef FLASHATTN_SM90_EARLY_BLOCK_FLAGS
#define FLASHATTN_SM90_EARLY_BLOCK_FLAGS 1
#endif

// Two switches of the tile boundary at short rows (helpers sm90q, session 6, and sm90u, session 7;
// docs/performance-sm90.md "Session 7, helper sm90u"). UNIFORM_CONSUMER: 0 off, else on. SPLIT_Q: 0 off,
// 1 on the kernels named below (the default), 2 on every kernel (a measurement setting).
//  - UNIFORM_CONSUMER: the consumer warpgroup index reaches consumer_loop through a shuffle from lane 0,
//    which ptxas knows to be warp-uniform (threadIdx.x / 128 is, but ptxas cannot prove it), so Q's rows,
//    O's buffer, the turn barriers and every address derived from them stay on the uniform datapath.
//    SASS (d128 bf16 dense kernel): R2UR 150 -> 98 in the kernel, 16 -> 0 in the key-block loop
//    (1107 -> 1093 instructions per block; d256 1017 -> 986, R2UR 32 -> 0). On every kernel (d = 192:
//    tested, not timed).
//  - SPLIT_Q: Q per consumer warpgroup. Each consumer's 64 query rows are a TMA box of their own with
//    their own full / empty barriers, so the next tile's rows of a consumer are loaded as soon as THAT
//    consumer's last S GEMM of the tile completed (or, where O reuses Q's buffer, its O store read
//    them), not when the slower of the consumers' did. Session 6 measured it 3-9% slower: the
//    consumer-dependent barrier addresses took the kernel off the uniform datapath, which
//    UNIFORM_CONSUMER keeps it on (UISETP 48, R2UR 119 at d128; 0 and 236 without the shuffle).
//    1: the d = dv = 64 and 256 kernels.
// Measured on an H200 (2026-11-22, two runs, cuDNN and a control build in the same process; means of
// the ratios to the control): uniform consumer alone d64 +1.6..2.2%, d128 +0.5..1.9% (<= 1k keys),
// +1.8% (>= 2k), d256 -0.2% / +2.1% (one run); with split Q d64 +3.6..4.7% (<= 1k) and +3.2% (>= 2k),
// d256 +1.5% / +5.1% (one run), d128 +0.0..2.2% / -0.3..+0.7%, i.e. no better than the shuffle alone.
#ifndef FLASHATTN_SM90_UNIFORM_CONSUMER
#define FLASHATTN_SM90_UNIFORM_CONSUMER 1
#endif
#ifndef FLASHATTN_SM90_SPLIT_Q
#define FLASHATTN_SM90_SPLIT_Q 1
#endif

// The score mask of masked key blocks (score_mask.h apply_score_mask; docs/kernel-notes-sm90.md, session 8,
// helper sm90m), per kernel family: 2 = per-row bit masks of the visible fragment columns (R2P + one
// select per score, one-sided without a left window), 0 = each score's key compared with both bounds (the
// code before session 8). Form 2 writes the
// predicate registers P0-P6, so ptxas keeps the consumer loop's warp-leader predicate in a register (+2
// instructions per key block on the unmasked path too). Measured on an H200 (session 8, integrator,
// bench/integration/s8_mask_ab.sh: three passes, form 0 / form 2 / form 0 again as the control, cuDNN in the
// same process): d128 causal 512 +2.0% (control spread 0.7%), non-causal 512 / 8k within noise; d64 causal
// 512 / 1k / 2k +0.8 / +0.8 / +0.3%, but d64 non-causal 512 / 1k -3.4 / -4.0% (control 0.5 / 1%). So the
// d = dv = 128 kernel (d96 runs it) took form 2, every other kernel form 0. Session 25, paired timing on an
// H200 (bench/integration/s25_mask_form.sh, three passes, control within +-0.3%), form 2 in every other
// kernel: d64 causal 512 / 1k / 2k / 16k +3.0 / +2.1 / +1.6 / +0.9%, d192 causal +1.9..+3.1% (512-16k), d256
// causal +0.1..+0.4%; one pass unmasked: d64 512 / 2k / 8k -0.3 / -0.2 / -0.7%, d256 -0.1..+0.4%. So form 2
// everywhere (d64's unmasked rows also take the decoded handoff's +0.2..+1.5%,
// FLASHATTN_SM90_DECODED_HANDOFF).
#ifndef FLASHATTN_SM90_MASK_FORM_D128
#define FLASHATTN_SM90_MASK_FORM_D128 2
#endif
#ifndef FLASHATTN_SM90_MASK_FORM_OTHER
#define FLASHATTN_SM90_MASK_FORM_OTHER 2
#endif

// Session 8, helper sm90t (short rows, issue 6): the tile order (forward_launch.h; docs/performance-sm90.md
// "Session 8, helper sm90t"). ncu at s 512 non-causal, d128 b32 h16: the session-7 order (L2 sections of
// half of L2, heads fastest inside a section) read 311 MB from DRAM where Q, K and V are 192 MB (cuDNN:
// 201 MB): a head's K/V did not survive in L2 from its first query block to its last (a section's 100
// heads of K/V are 25 MB, and the Q / O of 300 tiles stream past in between). Two host-side switches:
//  - HEAD_MAJOR_MAX_SEQLEN (kernels with d, dv <= HEAD_MAJOR_MAX_D): when the static schedule runs (no
//    causal / window mask, one length) and the key sequence has at most this many keys (0: never; negative:
//    every length), the sections are one head each (sec_heads = 1): a head's query blocks are adjacent
//    tile indices, so the CTAs running them at the same time read the same K/V blocks at the same time.
//    tile_work decodes sections of one head like any other. ncu (d128 s512): DRAM reads 311 -> 201 MB,
//    L2 hit rate 54 -> 62%, -5% kernel time at locked clocks (d64: 309 -> 201 MB, -1.5%). Same-process
//    A/B on an H200 (two runs, control build beside): d128 non-causal 512 +8..12%, 1k / 2k +0..5%,
//    >= 4k -1.4..-0.3% (within the control's +-3%); d64 non-causal +2..7% at 512-2k, +1..2% at 4k-16k.
//  - SECTION_L2_DIVISOR (the d = dv = 128 kernel; d96 runs it): the dynamic schedules (causal, windowed,
//    variable length) take sections of 1 / divisor of L2 instead of 1 / 2. Causal s 512: DRAM reads
//    206 -> 201 MB, +3% at free clocks (two variants against three baselines), 1k-4k within noise. At d64
//    the smaller sections lost ~1% (1k-4k) and, under ncu at 512, 2.4% (the longest-first order of a
//    half-L2 section balances the tail better), so the d64 kernels keep 2. At d256 (integrator,
//    bench/integration/s8_d256_sections.sh, three passes, causal) 4 and 8 read +0.9..1.2% at 512 and
//    -3..-8% at 4k: the d256 kernels keep 2 as well.
#ifndef FLASHATTN_SM90_HEAD_MAJOR_MAX_SEQLEN
#define FLASHATTN_SM90_HEAD_MAJOR_MAX_SEQLEN -1
#endif
// Session 16 (prepared for session 17, not measured): sections of one head for the dynamic schedule too
// (masked problems of one length) up to this many keys (0: never), on the same kernels. ncu on an H100
// (bench/integration/s16_h100_short.sh): d256 causal 512 / 1k read 249 / 285 MB from DRAM against cuDNN's 201
// MB (Q, K and V are 192 MB) and run 0.89 / 0.97 of cuDNN at free clocks; d64 / d128 causal 512 read 211 /
// 203 MB. With half-L2 sections ~48 heads' K/V (24 MB at 512 keys) and their tiles' Q and O pass between a
// head's first and last query block. bench/integration/s17_short_causal.sh is the A/B.
#ifndef FLASHATTN_SM90_HEAD_MAJOR_MASKED_MAX_SEQLEN
#define FLASHATTN_SM90_HEAD_MAJOR_MASKED_MAX_SEQLEN 0
#endif
#ifndef FLASHATTN_SM90_SECTION_L2_DIVISOR
#define FLASHATTN_SM90_SECTION_L2_DIVISOR 8
#endif
// Session 36: VARLEN_HEAD_MAJOR: unmasked problems with per-sequence lengths (cu_seqlens / seqused, dense
// K/V; not the KV-cache or paged forms, which were not measured) take the head-major order of
// HEAD_MAJOR_MAX_SEQLEN on their dynamic schedule (sections of one (sequence, head) pair, its query blocks
// adjacent) instead of L2 sections of many heads: the order that gave the batched unmasked rows +5..+14% at
// d256 512-2k (session 8). Measured on an H200 (bench/integration/s36_varlen2.sh: bench/varlen_compare.py,
// 16k packed tokens, 400 ms stints, four rounds, against the tree): d128 equal / uniform / short / long_tail
// mixes 1.032 / 1.024 / 0.999 / 1.006, d256 1.026 / 0.984 / 1.030 / 1.054 (the masked rows, which it leaves
// alone, read 0.982-1.026 in the same call: the noise); again (s36_varlen3.sh, five rounds, the tree against
// 0, inverted) d128 1.033 / 1.006 / 1.008 / 1.000, d256 1.044 / 1.059 / 1.020 / 1.079. 0: L2 sections as for
// masked problems.
#ifndef FLASHATTN_SM90_VARLEN_HEAD_MAJOR
#define FLASHATTN_SM90_VARLEN_HEAD_MAJOR 1
#endif
// Per-sequence tensor maps (varlen, KV cache) are written by the prepare kernel through the generic proxy, so
// the producer acquires a tile's three maps for the tensormap proxy before its loads (producer.h) and the
// epilogue O's before its store: a fence per tile. Measured, not kept (bench/integration/s36_varlen2.sh,
// s37_acquire.sh; 400 ms stints, bench/varlen_compare.py, 16k packed tokens): acquiring a sequence's maps
// once per run of its tiles. With the sequence in a register (session 36, code in e1ade7c): +0.5..+4.1%
// unmasked (mean +2.0%), 0.948-1.004 masked (mean 0.990), and 2-3 more LDL / STL in the 24-register producer
// of most dense kernels. With it in the tile-index slot's spare word in shared memory (session 37, no LDL /
// STL added; code in 3f79d13): 0.962-1.015 unmasked (mean 0.995), 0.992-1.073 masked (mean 1.010) over two
// passes; the batched d128 non-causal 8k / d256 causal 4k rows 1.004 / 0.992. Every fence left out (a
// measurement build only, which the memory model does not allow): +2.3% unmasked, +1.0% masked, the most
// any fence-free design could gain.
//
// Session 37: PREPARE_OVERLAP: 1 launches the forward kernel of a problem with per-sequence maps as a
// programmatic dependent of the prepare kernel that writes them (forward_launch.h), so that its CTAs' launch
// and barrier setup overlap that kernel instead of following it; every forward thread waits for the prepare
// kernel's results before its first read of them (forward_kernel.h). Measured on an H200
// (bench/integration/s37_pdl.sh: bench/varlen_compare.py, 400 ms stints, four rounds, two passes, against
// 0): 2k packed tokens (calls of 20-60 us) d128 0.993-1.072 (mean +3.0%; 14 of 16 readings above 1), d256
// 1.009-1.058 (mean +2.3%, 16 of 16); 16k tokens 0.976-1.035 (mean +0.1%: the noise). 0: the launches in
// stream order. Measured, not kept: the same for the batched dynamic schedule (its tile counter zeroed by a
// one-thread kernel instead of cudaMemsetAsync, the forward kernel its programmatic dependent; code in
// 4893700; bench/integration/s37_counter.sh, stints beside cuDNN, two passes): causal rows of 2k tokens per
// call (d64 / d128 / d256, 512-2048 keys) 0.997-1.004, 16k tokens d64 / d128 causal 512 1.004 / 1.003.
#ifndef FLASHATTN_SM90_PREPARE_OVERLAP
#define FLASHATTN_SM90_PREPARE_OVERLAP 1
#endif
// Session 49: CACHE_LENGTHS, a KV cache's per-sequence lengths read by the decode kernels themselves
// (kernel_params.h CacheLengths; forward_launch.h use_cache_lengths), where q is dense and the cache paged,
// or dense without a leftpad or batch index on the narrow tile (which zeroes V's rows past the sequence's
// end). The prepare kernel then runs only to append or to zero counters, and the forward waits for it in
// the producer, before its first K / V load. Measured on an H200 against 0 (s49_cache.sh: graphed decode
// steps, three interleaved rounds): dense d128 32/8 0.92-0.94 at 1000 keys batch 1-4, 0.83 at batch 8,
// 0.96-0.98 at 4k-16k, d64 0.91-0.92, d256 0.86-0.98, appends 0.84-0.87, batch 64 (the dynamic schedule,
// still a prepare kernel) 1.00. 0: every KV-cache launch through the prepare kernel's per-sequence lengths
// and maps (the tree before session 49).
#ifndef FLASHATTN_SM90_CACHE_LENGTHS
#define FLASHATTN_SM90_CACHE_LENGTHS 1
#endif
// Session 50: CLUSTER_COMBINE, a split tile's pieces on the narrow tile launched as one thread-block cluster
// (forward_launch.h cluster_pieces: 2-16 pieces since session 51, one item per CTA), each piece's record sent
// by st.async into the shared memory of the cluster's first CTA, which waits for their bytes on one mbarrier
// and combines them (decode_consumer.h send_piece_record; since session 53 each row goes to its owner, the
// CTA of the row's rank where the cluster has a CTA per row, which sums it: combine_owned_rows). Replaces the
// global records, the arrival counter (an L2 atomic per piece) and the last arriver's reload of every record
// (an L2 round trip), and with them the counters' zeroing (the prepare kernel or a memset); with it the split
// count's rule for the cluster (split_kv_plan.h). Measured on an H200 against 0 (final50b.sh: graphed decode
// steps, three interleaved rounds): 1000 keys d128 32/8 0.79 / 0.78 / 0.81 at batch 1 / 4 / 8, d64 0.74 /
// 0.76, d256 16/8 0.78, pages of 64 0.74 / 0.82; 3999 keys 0.79 (batch 1) / 0.93 (batch 8); 16100 keys 0.96.
// 0: every split through the arrival counter, with session 49's count rule.
#ifndef FLASHATTN_SM90_CLUSTER_COMBINE
#define FLASHATTN_SM90_CLUSTER_COMBINE 1
#endif
// Session 51: the cluster's slots sized for this many pieces of 8 rows (at most what fits beside the rest of
// the narrow tile's shared memory; ForwardConfig kClusterRecordsBytes). 8 (session 50's slots) read the same
// decode times as 16 where both hold the pieces (s51_cluster16b.sh): the larger layout costs nothing.
#ifndef FLASHATTN_SM90_CLUSTER_SLOTS
#define FLASHATTN_SM90_CLUSTER_SLOTS 16
#endif
// Measured, not kept (session 38; code in cf4d679): varlen problems with cu_seqlens_q taking the next tile's
// Q prefetch through the launch's Q map encoded over the packed rows of every sequence (no acquire). Against
// the same tree without it (bench/integration/s37_prefetch.sh, 400 ms stints, H200): 16k tokens, two passes,
// 16 rows each, means 0.999 / 1.006 (rows 0.965-1.044; d256 long_tail 0.965 / 0.988), 2k tokens d128 1.000.
// Predicted +0.5..+2% on the unmasked rows; none showed beyond the noise.
// Session 38: SPLIT_TAIL, the unmasked d = dv = 128 K/V multicast instance (every d128 non-causal grid row
// from 2k keys) with a stream-K tail (split_tail.h) for problems of at least this many keys (0: never). Its
// static schedule runs 1024 units on 66 clusters at every grid length (15.5 rounds), so half the SMs idled
// through the last round (session 32 read whole rounds +1.5..+2.8% over such neighbours, s32_rounds.sh). The
// last partial round (or, when that is under half a round, the last one and a half) is cut into equal
// key-block shares, one per cluster; a unit split between clusters is combined by the last warpgroup to
// finish it (fp32 records in the workspace). Measured on an H200 (bench/integration/s38_tail.sh, 400 ms
// stints with cuDNN interleaved, two passes, a control copy of base): non-causal 2k / 4k / 8k / 16k 0.995 /
// 1.011 / 1.008 / 1.029 of the tree without it (control 1.005 / 0.986 / 0.995 / 0.983); 16k read 700.0 /
// 702.9 TFLOP/s against 680.4 / 680.6. Predicted +1..+2.5%. Hence from 4096 keys (at 2k the shares are
// eight key blocks, half a unit, and read below the control in both passes).
#ifndef FLASHATTN_SM90_SPLIT_TAIL
#define FLASHATTN_SM90_SPLIT_TAIL 4096
#endif
// Session 45: SPLIT_KV, split-KV decoding in the one-consumer decode kernel (split_kv.h, split_kv_plan.h):
// each tile's key blocks cut into pieces that run as work items of their own, combined in the kernel by the
// last piece to finish. Before it a decode of few tiles (batch 1-8, GQA 32/8) ran one CTA per K/V head and
// sequence, each bound by its own latency, or went to cuda_sm80's splits (0.5-0.93x of SDPA's FA2 and cuDNN,
// session 44). 0 turns it off (a measurement setting).
#ifndef FLASHATTN_SM90_SPLIT_KV
#define FLASHATTN_SM90_SPLIT_KV 1
#endif
// Session 55: SPLIT_KV_TAIL, a decode of more tiles than SMs splits the tiles of its last, partial round
// (split_kv_plan.h split_kv_tail; SplitKV whole_tiles), whose loads otherwise ran on tail-many SMs alone.
// 0 turns the split off (a measurement setting).
#ifndef FLASHATTN_SM90_SPLIT_KV_TAIL
#define FLASHATTN_SM90_SPLIT_KV_TAIL 1
#endif
// Session 56: TWO_CTAS_PER_SM, the narrow decode tile at d = 64 / 128 (d = 96 on d = 128's) in a kernel of
// which two CTAs fit on a SM (ForwardConfig kCtasPerSm: two stages of 32 KB of K and V, at most 128
// registers a thread), launched where a decode's tiles outnumber the SMs but fit two a SM, over at most
// TWO_CTAS_MAX_SEQLEN keys (forward_dispatch.h decode_ctas_per_sm): every tile then streams at once, instead
// of a last round of tiles % sms CTAs whose split (SPLIT_KV_TAIL) costs a record, an arrival and a combine
// per piece (~5 us of a 27 us call over 1024 keys in session 56's trace, s56_checks.sh). Measured on an H200
// against the switch off (s56_two.sh, s56_final.sh, s56_limit.sh; two passes each): GQA 32/8 d128 over 1024
// keys at 17-33 sequences 0.85-0.95 of the time, over 4096 (a cache of 4352) 0.97-0.98; d64 over 1024
// 0.77-0.90; MHA d128 at 5 / 8 sequences 0.86-0.96; lengths of half to all of 1024 keys 0.86-0.90. Where it
// lost, the rule leaves it out: past two tiles a SM (40-64 sequences, 1.00-1.08: rounds of 64-key blocks
// against the other kernel's split tail), and over long keys at 17-20 sequences (8192 keys of different
// lengths 1.03-1.05, 12000 1.03, 16384 1.03-1.07): a CTA of this kernel has half the other's bytes in flight,
// which the SMs that hold one CTA feel once the loads wait long. TWO_CTAS_MAX_SEQLEN: 4608, past the 4352
// keys measured (8192 read 0.99-1.01 with every sequence full, 1.03-1.05 with different lengths). 0 keeps
// every decode on the kernel of one CTA a SM (a measurement setting).
#ifndef FLASHATTN_SM90_TWO_CTAS_PER_SM
#define FLASHATTN_SM90_TWO_CTAS_PER_SM 1
#endif
#ifndef FLASHATTN_SM90_TWO_CTAS_MAX_SEQLEN
#define FLASHATTN_SM90_TWO_CTAS_MAX_SEQLEN 4608
#endif
// Session 57: NARROW_D64_BLOCK_N, the keys a block of the narrow tile's kernel of one CTA a SM at d = 64, its
// stages as many as hold 512 keys (4 of 128, 2 of 256): the same bytes in flight, half the consumer's waits,
// exchanges and barriers a byte at 256. With 128 a block's 32 KB stream in about a microsecond of a SM's
// share of HBM, near the consumer's own chain per block, and d64's decodes of several tiles a CTA read 4-10%
// slower than cuDNN's where d128's (64 KB a block) read level. Measured on an H200 against 128
// (s57_d64blocks.sh, two passes with the order swapped, GQA 32/8 unless named): pages of 16 at 64 sequences
// over 1024 keys 0.85-0.87 of the time, pages of 64 at 4 sequences over 4096 0.87, one sequence over 16384
// 0.84, over 4096 0.95; several tiles a CTA 0.97-0.99 at 1024 keys, 0.99 at 4096-16384, MHA at 16 sequences
// 0.96; one wave 1.00. Slower where a short cache is split at small batch (half as many key blocks to cut
// pieces from): 1024 keys at 1 / 4 sequences 1.01-1.03, an append or 8 requested pieces over 1000 keys at 4
// 1.02-1.03, all still 1.08-1.20x cuDNN's speed. 128 is the earlier kernel (a measurement setting).
#ifndef FLASHATTN_SM90_NARROW_D64_BLOCK_N
#define FLASHATTN_SM90_NARROW_D64_BLOCK_N 256
#endif
// Measured, not kept (session 58; code in cf41057): PREFETCH_CACHE_LENGTHS, thread 0 prefetching its first
// tile's KV-cache lengths into L2 before the barrier set-up, after session 58's trace had the producer wait
// 0.67 us (median over 132 CTAs) for that read at 48 sequences over 1024 keys. Against the plain read
// (s58_lengths.sh, two passes): calls of 48-64 sequences 0.993-0.999 of the time, short calls (1-8
// sequences, 6-12 us) 1.005-1.03 slower, the rest 1.00; predicted 0.94-0.97 for the short ones. Their
// lengths are still in L2 from the call before (a few MB a call), so the prefetch only adds its ~40
// instructions before the barriers; only calls that stream more than L2 miss on them.
//
// Measured, not kept (session 58; code in 2342e81): DEFER_PREPARE_WAIT, a KV-cache decode whose prepare
// kernel appends nothing (it only zeroes the counters) issuing its first tile's loads before
// griddepcontrol.wait and claiming its next tile after them. 1.00 of the time on 43 rows (split decodes at
// 1-8 sequences, many tiles, pages, d256), 1.02-1.04 slower at 40 sequences, in both passes
// (s58_defer_rest.sh; predicted 0.85-0.95 for the splits): the wait is not on the first load's path.
// Session 58's trace has the first K load issued 1.8 us after the CTA starts, the wait passing within
// 0.06 us of the tile's length read.
//
// Measured, not kept (session 57; code in 475b9ed): NARROW_Q_SLOTS, the narrow tile's Q in two slots of its 8
// rows (8-row boxes inside Q's buffer, a q_full / q_empty pair a slot), so that the next tile's Q, and every
// K / V load the producer issues behind it, no longer waited for the current tile's last S GEMM. Against one
// 64-row slot (s57_qslots.sh, two passes with the order swapped; 38 decode rows of 1-128 sequences over
// 1024-16384 keys, d64 / d128 / d256, dense and paged, CTAs of one to ten items): 0.98-1.01 on every row (one
// d64 row read 0.92 and 1.02 in the two passes), where 0.85-0.97 was predicted for CTAs of several tiles. A
// ring that runs dry on one SM at its tile boundary costs nothing: the 132 SMs keep ~17 MB in flight, about
// twice HBM's bandwidth-delay product, so the other SMs' loads fill the gap.
// Session 45: the pieces whose records split_kv.h's combine loads at once (1 = one L2 round trip per piece).
#ifndef FLASHATTN_SM90_SPLIT_KV_COMBINE_BATCH
#define FLASHATTN_SM90_SPLIT_KV_COMBINE_BATCH 4
#endif
// Measured, not kept (session 39; code in b4e1c77): the same tail for the unmasked d = dv = 256 kernel of
// 80-key blocks (O over the V stages; a split piece's warpgroup that does not store passed its O's V-ring use
// on), whose grid rows run 1024 tiles on 132 CTAs (7.76 rounds). Against the tree without it (s39_tail256.sh,
// 400 ms stints with cuDNN interleaved, three passes, a control copy of base): non-causal 1k / 2k / 4k / 8k /
// 16k 0.937 / 0.969 / 1.008 / 1.019 / 1.020, control 0.994 / 1.002 / 1.007 / 1.029 / 1.016; predicted
// +1..+2.5% from 4k. Under ncu (clocks locked, s39_tailcost.sh) 1k 249.2 -> 272.0 us, 4k 851.7 -> 867.5 us:
// the cost is time, not power. Its pieces' epilogues (below) cost more than the quarter of a round that
// idled.
//
// Measured, not kept (session 39; code in 40f436c): the split pieces' epilogue made cheaper. A trace of d128
// 2k (s39_tailtrace.sh, one launch) shows a piece's key blocks at the static tiles' pace but its epilogue at
// 2.6 us (median; up to 8.4) against a static tile's 1.1 (in one cluster the record's write 1.7, the arrival
// 0.6, the last arriver's combine 4.7), so the tail ends 25.5 us after the static part, about a unit's time
// (ncu, clocks locked, s39_tailcost.sh: 2k 502.7 -> 515.9 us with the tail). The combine runs beside the next
// tile's first S accumulator and Q fragments (kEarlyNextS) and spills 144 / 140 B. Tried (s39_tailtrace.sh,
// s39_epilogue.sh; ncu and 400 ms stints beside cuDNN, two passes, against SPLIT_TAIL=0): the own piece from
// registers and the other records' loads in batches of 8 float4 (spills 380 / 280 B): ncu 2k 507.2 / 4k 952.7
// us against 503.0 / 938.7 for session 38's combine, stints 0.965 / 0.994 / 1.024 at 2k / 4k / 16k against
// 0.997 / 1.022 / 1.016; a split piece's epilogue before the next tile's first S (spills 32 / 28 B, either
// combine): stints 0.956-0.975 at 2k-16k against 0.990-1.029 for session 38's order, ncu 4k 1018 / 1007 us
// against 952: with two orders of the tile loop the whole loop ran slower.
//
// Measured, not kept (session 39; code in cfabebd): EARLY_Q_RELEASE, Q's buffer released after each tile's
// first S GEMM in the d = dv = 128 two-consumer kernels, whose S GEMMs take all of Q from registers. Why: a
// per-warp trace (s39_epitrace.sh, one launch) puts 2.2 us per tile outside the key blocks at d128 non-causal
// 2k-16k: 1.1 from a tile's last P V to its successor's first S issue (the next Q, first K and issue
// turn), 1.0 in the epilogue (O to shared memory 0.38, the proxy fence 0.10, the barrier 0.13, the TMA store
// and LSE 0.29-0.48), 0.13 to the first S done. Against the tree without it (s39_qrelease.sh, 400 ms stints
// beside cuDNN, two passes, outputs bitwise equal): non-causal 2k / 4k / 8k / 16k 0.991 / 0.989 / 0.997
// / 1.011, causal 2k / 4k / 8k 0.984 / 0.997 / 0.992 (control 0.989-1.013). The producer issues the next Q
// only after the tile's last K / V loads, which wait for stages, so an earlier release changes little of when
// Q lands.
//
// Measured, not kept (session 40; code in 468816d): EARLY_NEXT_LOADS, the d = dv = 128 two-consumer kernels'
// producer issuing the next tile's head before the current tile's last V load (1: its index and first K; 2:
// its Q as well, with EARLY_Q_RELEASE's release after the first S). Against the tree without it
// (s40_early_head.sh, 400 ms stints beside cuDNN, two passes, outputs bitwise equal on 12 shapes): 1
// non-causal 2k / 4k / 8k / 16k 1.011 / 1.003 / 0.986 / 0.997, causal 2k / 4k / 8k 0.987 / 1.011 / 1.007;
// 2 1.022 / 0.984 / 0.984 / 0.985, 0.989 / 1.003 / 0.997; control 1.019 / 1.001 / 0.998 / 1.003, 0.989 /
// 0.974 / 1.001. The trace of 2 (s39_begintrace.patch) read the consumers' boundary steps unchanged (h->q
// 0.288, q->k 0.192 us median, as without): those steps are the consumers' own latency and the trace's stores
// (each step's minimum, 0.13-0.22 us, is close to its median), not waits for the next tile's loads.
//
// Measured, not kept (session 40; code in abc6416): MERGED_BOUNDARY, the d = dv = 128 unmasked K/V multicast
// instance's consumers (consumer_merged.h, with EARLY_NEXT_LOADS=2 as its producer) issuing a tile's last P V
// in one issue turn with the next tile's first S, writing O to shared memory once both are done and storing
// it after the next tile's first GEMM pair, so that the epilogue runs beside tensor work. Outputs and LSE
// bitwise equal on 9 shapes (split tail, ragged keys, sink, softcap, ALiBi, GQA). Against the tree without it
// (s40_merged.sh, 400 ms stints beside cuDNN, two passes): non-causal 2k / 4k / 8k / 16k 0.929 / 0.934 /
// 0.937 / 0.938, its producer alone 0.999 / 0.986 / 0.982 / 0.986, control 0.972-1.000. With the split tail
// compiled in, its key-block loop lost the uniform datapath (32 R2UR per block before the HGMMAs, none in the
// tree's; local SASS); without it (SPLIT_TAIL=0 in every build, s40_merged0.sh) 0.980 / 0.991 / 0.993 /
// 0.980, its producer alone 0.970 / 0.989 / 0.994 / 0.992, control 0.965 / 1.001 / 1.000 / 1.000: the
// rearranged boundary gains nothing over its producer. Waiting for the first S alone at the tile's top (its
// softmax beside the last P V) made ptxas serialise the kernel's wgmmas (C7514: the accumulators then in
// flight and the softmax's registers do not fit).

// Session 27: the d = dv = 128 kernel's dynamic schedule (causal or windowed rows off the K/V multicast) with
// SECTION_L2_MID_MIN_SEQLEN <= keys < SECTION_L2_MID_MAX_SEQLEN takes sections of 1 / SECTION_L2_DIVISOR_MID
// of L2 instead (0: never). Causal 4k, an H200, sections of a quarter against an eighth (6 kv heads against
// 3): paired timing +1.6% (session 26, s26_knobs.sh) and 400 ms stints with cuDNN interleaved +2.3% [+0.8,
// +4.5] over three passes (bench/integration/s27_d128.sh); the same build read causal 2k 0.979 (12 heads
// against 6) and 8k 0.981 (3 heads against 1, on the causal multicast instance's static couples), and
// 16k 1.001 (one head either way: the run's control). Hence the quarter between 4096 and 8192 keys only.
#ifndef FLASHATTN_SM90_SECTION_L2_DIVISOR_MID
#define FLASHATTN_SM90_SECTION_L2_DIVISOR_MID 4
#endif
#ifndef FLASHATTN_SM90_SECTION_L2_MID_MIN_SEQLEN
#define FLASHATTN_SM90_SECTION_L2_MID_MIN_SEQLEN 4096
#endif
#ifndef FLASHATTN_SM90_SECTION_L2_MID_MAX_SEQLEN
#define FLASHATTN_SM90_SECTION_L2_MID_MAX_SEQLEN 8192
#endif
// The same for every other kernel (half of L2 since session 2); settable for measurement builds only. Session
// 15 (s15_l2.sh, s15_sec4.sh): all of L2 (1) 0.986-1.015 of half on d64 / d256 causal rows (control
// 0.972-1.021) with d64 causal 16k DRAM reads 283 -> 583 MB; a quarter (4) at d256 causal 2k / 4k / 8k 0.971
// / 1.007 / 0.956 (control 0.978 / 0.997 / 1.022).
// Session 27 (s27_sec256.sh, s27_onehead.sh: 400 ms stints with cuDNN interleaved): a quarter / an eighth at
// d256 causal 8k read 1.011 / 1.026 in two passes, but one-kv-head sections for the causal multicast couples
// (a switch, removed) then read 6k / 8k / 12k 1.009 / 0.998 / 0.996 of half-L2 ones over three passes, with
// an identical control at 1.007 / 0.985 / 0.977: no gain beyond the stints' noise.
#ifndef FLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER
#define FLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER 2
#endif
// Session 10 (issue 6, causal rows): the dynamic schedule's last L2 section takes in the regular sections
// before it until it holds at least this many tiles per CTA (tile_sections.h plan_tile_sections; 0: the
// last section keeps only the remainder, the order before session 10). A small last section (one or two
// heads at long causal rows) hands out its longest tiles at the end of the launch, where one runs on alone.
#ifndef FLASHATTN_SM90_TAIL_SECTION_FACTOR
#define FLASHATTN_SM90_TAIL_SECTION_FACTOR 2
#endif
// Session 15 (issue 6, masked long rows): the dynamic schedule of causal (and right-window) problems of one
// length whose L2 section holds a single kv head (the kernels with half-L2 sections: d256 from ~12k keys,
// d192, large V; not d128, whose 1/8-L2 sections already read about Q + K + V from DRAM) hands out its tiles
// in complementary couples (tile_sections.h paired: query units r and units - 1 - r of a head, the same key
// blocks together for every r), each couple to one CTA. Every claim is then equal work and the CTAs' couples
// cover about two heads at a time, where the longest-first order of single tiles kept three or four heads'
// K/V in flight. Measured on an H200 (bench/integration/s15_paired.sh, three passes, cuDNN and a control
// beside; pairing on every causal problem): d256 causal 16k +3.1% (683.7-690.4 against base 661.9-673.9,
// control 651.8-664.7), DRAM reads (ncu) 741 -> 295 MB; but d256 causal 8k (three heads per section) -1.4%,
// 2k -5%, d64 causal 16k -2% with DRAM 284 -> 408 MB, d128 within noise: hence only one-head sections. 0:
// single tiles, longest first, everywhere.
#ifndef FLASHATTN_SM90_PAIRED_TILES
#define FLASHATTN_SM90_PAIRED_TILES 1
#endif
// Session 16: causal (and right-window) problems of one length take their couples on the static schedule
// (CTA b the couples b, b + grid, ...: every couple is the same work, so no claims) on every kernel, whatever
// the sections hold. 0: the dynamic schedule (couples only as above). The K/V multicast kernel's causal
// problems (KV_MULTICAST_CAUSAL) always run static couples.
#ifndef FLASHATTN_SM90_STATIC_COUPLES
#define FLASHATTN_SM90_STATIC_COUPLES 0
#endif
// Session 18 (issue 6, short causal d256 rows): causal (and right-window) problems of one length on the
// d = dv = 256 kernels of one CTA per tile with at most this many keys (0: never) take their couples on the
// static schedule in a head-major order (tile_sections.h couples_by_pair: a head's couples consecutive) and
// launch in clusters of two CTAs, which the kernel does not use: the hardware puts a cluster in one GPC, so
// the two CTAs that hold a head's two couples (at four query blocks, 512 keys) read its K/V through one L2
// partition. Why: s17_l2_short.sh (H100, ncu) found d256 causal 512 reading as much from L2 into the SMs as
// cuDNN but 8.9 M sectors between the L2 partitions against cuDNN's 5.3 M and 251 MB from DRAM against 201.
// Measured on an H100 (bench/integration/s18_placement.sh, three passes, cuDNN and a control beside): ncu at
// 512 fabric sectors 8.5 -> 6.0 M, DRAM 248 -> 209 MB, time 125.1 -> 123.6 us; at 1k 10.7 -> 6.9 M and 283 ->
// 206 MB; A/B causal 512 1.060 of base (control 0.997; static couples without the clusters 0.944), 1k 1.036
// (0.981). At d = 128 (512: 0.997, control 1.049) and d = 64 (0.990 / 1.011) nothing: not there. Session 23:
// 2048, with the 64-key blocks there (D256_BLOCK64_MAX_SEQLEN_MASKED below: causal 2k +3.8% on an H200).
// Session 26: 4096, with the 64-key blocks there too (D256_BLOCK64_MAX_SEQLEN_MASKED below; sustained load,
// s26_sustained.sh: causal 4k 1.02 of the 80-key multicast kernel).
#ifndef FLASHATTN_SM90_PLACEMENT_MAX_SEQLEN
#define FLASHATTN_SM90_PLACEMENT_MAX_SEQLEN 4096
#endif
// Session 41, measured on an H200 and removed (code in 78a55c2, balanced_tail.h): BALANCED_TAIL, these static
// couples ending in a balanced tail (2 / 2 / 3 whole rounds of couples at 4k / 2k / 1k, then the rest as
// single tiles, longest first, in a snake over the CTAs; planned per launch by a cost model). Outputs bitwise
// equal. The timeline at causal 4k (s41_balanced_b.sh): SM time idle after the loops end 3.9 -> 1.5-1.8%, but
// the span only 369 -> 366-368 us, the tiles running slower; ncu at locked clocks 1k / 2k / 4k -2.3 / -1.0 /
// -1.3%, DRAM reads +0 / +68 / +69 MB (the tail reads a head's K/V once per round of its tiles). 400 ms
// stints with cuDNN interleaved, two calls (s41_balanced.sh, s41_balanced_b.sh): 1k +0.9 / +0.7%, 2k +0.9 /
// -1.1%, 4k -0.7 / +0.3%, controls 0.96-1.02: under the power limit the idle tail's SMs leave their power to
// the busy ones, so balancing it gains little. The plan also cost ~15 us of host time per call.
//
// Session 32, measured on an H200 and removed (code in bea5372): DYNAMIC_TAIL_ROUNDS, the static schedules of
// one CTA per claim (equal tiles; the static couples on placement clusters) ending with one or two rounds of
// claims through the workspace counter instead of strides, so that the CTAs that finished their static part
// first take the last round (bench/integration/s32_tail.sh, 400 ms stints with cuDNN interleaved, two passes,
// control within 0.3-1.7%): one round d256 causal 1k / 2k / 4k 0.987 / 1.007 / 0.997, non-causal 1k / 4k
// 0.988 / 1.003, d128 non-causal 1k 0.992; two rounds 0.980 / 0.991 / 1.006, 0.990 / 0.999, 0.990. The tail's
// claims lose the placement clusters' head locality at short rows and gain nothing elsewhere: the makespan's
// spread between runs (s32_stints256.sh) is not a slow CTA's.
//
// Session 18, measured on an H100 and removed (three passes beside cuDNN and a control; the code is in the
// commits bench/integration/README.md names for each script):
//  - the same clusters of two for unmasked short rows (FLASHATTN_SM90_PLACEMENT_UNMASKED_MAX_SEQLEN,
//    s18_placement_unmasked.sh): 0.968-1.003 of base at d64 / d128 / d256 512 and 1k (control 0.981-1.010);
//    those rows already read the DRAM minimum (201.4 MB, as cuDNN) and the clusters raised the L2 fabric
//    sectors (5.9 -> 7.1 M at d256 and d128 512);
//  - the next tile's Q fetched into L2 by the producer after the current tile's key blocks (TMA prefetch;
//    FLASHATTN_SM90_PREFETCH_NEXT_Q, s18_prefetch_q.sh): 0.997-1.012 (control 0.990-1.010), so Q's DRAM
//    latency is not what the short rows wait on (issued inside the key-block loop, the 24-register producer
//    spilled);
//  - the next tile's first two / four key blocks, K and V, fetched into L2 the same way
//    (FLASHATTN_SM90_PREFETCH_NEXT_KV, s18_prefetch_kv.sh): 0.916 / 0.948 / 0.968 and 0.857 / 0.771 / 0.873
//    of base at non-causal d128 / causal d128 / causal d256 512 (control 0.986 / 0.995 / 1.000). Those rows
//    run the DRAM at ~71% of peak: extra requests queue in front of the demand loads (s18_stall_sites.sh: the
//    consumers wait for the next key block, never for Q).
// HEAD_MAJOR_MAX_D (helper sm90o, session 8): the largest d / dv whose kernels take HEAD_MAJOR_MAX_SEQLEN's
// order (128: only the kernels sm90t measured; 256: every kernel). At d256 s 512 (b32 h8) a half-L2 section
// is ~50 heads of K/V, so a head's next query block ran ~50 tiles after the previous one: ncu (locked
// clocks, bf16, non-causal) DRAM reads 369 -> 201 MB (cuDNN 201 MB), L2 hit 48 -> 58%, kernel time
// 170.0 -> 159.3 us (cuDNN 162.6 us). Same-process A/B on an H200 (two passes, control beside, spread
// <= 1.4% on those rows but up to 7% at 2k): d256 non-causal +14.2% at 512, +9.0% at 1k, +5.0% at 2k, +4.0%
// at 8k; causal rows run the dynamic schedule and are unchanged. The d192 and (64, 256) kernels take it by
// the same reasoning (GPU-tested, not timed). 128 restores the session-8 (sm90t) order.
#ifndef FLASHATTN_SM90_HEAD_MAJOR_MAX_D
#define FLASHATTN_SM90_HEAD_MAJOR_MAX_D 256
#endif

// Session 9, helper sm90v (issue 6, causal short rows): per-consumer key ranges (consumer.h
// kConsumerKeyRange). Each consumer warpgroup visits only the key blocks its own 64 rows see
// (score_mask.h consumer_key_block_range), not the tile's; for a block only the other consumer sees
// it still waits for the K / V stage to land and releases it, and takes an empty issue turn where
// the block's GEMMs would have been issued, so the shared pipeline and the turn rotation stay
// balanced; its mask decisions are for its own rows too. A consumer skips a block only where key
// blocks are narrower than the tile's 128 rows (d256: 80 / 64 keys; d192: 96; (64, 256): 64), at
// causal / windowed / sq != sk rows. 0: the tile's range for every consumer (the code before
// session 9); 1: the d = dv = 256 kernels (measured: docs/performance-sm90.md "Session 9, helper
// sm90v"); 2: every two-consumer kernel (a measurement setting: with 128-key blocks under an aligned
// causal mask no block is skipped, and run 1 read d64 / d128 causal 512 3-5% slower with it, with the
// empty turns then owed to the tile's end; not measured with the final placement).
#ifndef FLASHATTN_SM90_CONSUMER_KEY_RANGE
#define FLASHATTN_SM90_CONSUMER_KEY_RANGE 1
#endif
// The same for the four-consumer d = 64 kernel's masked instance (use_d64_alt_tile, ForwardConfig
// kMaskedInstance_; session 9, integrator): with 256-row tiles and 64-key blocks, consumer c of a causal
// tile skips 3 - c of the four diagonal blocks (a quarter of the consumer blocks at causal 512). Measured on
// an H200 (bench/integration/s9_d64_kr4.sh, two passes, cuDNN and a control in the same process): causal
// +6.5 / +5.7 / +3.3 / +5.9 / +1.8% at 512 / 1k / 2k / 4k / 8k against the kernels before (two consumers
// below 8k, three from 8k), 16k even; the same bookkeeping on the unmasked instance cost 2.5% at non-causal
// 2k (no block is skipped there), hence the separate instance. 1 = on.
#ifndef FLASHATTN_SM90_CONSUMER_KEY_RANGE_FOUR
#define FLASHATTN_SM90_CONSUMER_KEY_RANGE_FOUR 1
#endif

namespace flashattn::detail::cuda_sm90 {

// The narrow decode tile's query rows: the N of its wgmmas (m64n8k16), so one 8-row swizzle atom of P^T per
// 64 keys (ForwardConfig kNarrowPBytes).
inline constexpr int kNarrowRowsMax = 8;
// Bytes of one piece's slot in a CTA of the cluster: its `rows` rows of dv floats, then 8 LSEs (16-byte
// aligned: dv is a multiple of 64), of which a row owner receives its rows' (decode_consumer.h).
constexpr FLASHATTN_HD int cluster_slot_bytes(int rows, int head_dim_v) {
  return (rows * head_dim_v + 8) * 4;
}

// kHeadDim: of Q and K; kHeadDimV: of V and O (the (192, 128) pair differs).
// kLongKeyBlockN_: 0, or a key block width other than the default: the wider block of the
// d = 128 kernel for long key sequences (use_long_key_blocks below), 64 at d = 256 for
// short key sequences and paged K/V (use_d256_block64 below), or the key block of a d = 64
// alternative tile (use_d64_alt_tile below).
// kClusterM_: 1, or 2 for the kernels launched as clusters of two CTAs that share each K/V block
// through TMA multicast (use_kv_multicast below: d = 128, d = 256 and the d = 64 three-consumer kernel).
// kMaskedInstance_: an instance launched for masked (causal / windowed) problems only, where it may
// carry code that pays only under a mask (kConsumerKeyRange of the four-consumer kernel).
// kNarrowRows_: the decode kernel's narrow tile (one consumer, at most kNarrowRowsMax packed query rows;
// decode_consumer.h, use_narrow_rows below): the same producer and shared-memory ring, another consumer.
// kCtasPerSm_: 1, or 2 for the narrow tile's kernel at d = 64 / 128 of which two CTAs share a SM
// (TWO_CTAS_PER_SM above).
// kDropout_: the dropout instances (DropoutConfig below): the probabilities that go into P V are dropped by
// the Philox stream of common/philox.h (consumer.h drop_probabilities), so the row sums, which must count
// every probability, are the softmax's own, not the tensor cores' (no kRowSumMma).
// kGemmDim_: 0, or the narrowed GEMMs of a kernel (narrowed_gemm_dim below): 96 on the d = dv = 128
// two-consumer kernels, 160 on the d = dv = 192 ones. Their shared-memory layout and loads are the kernel's
// (TMA zero-fills the columns past the problem's), their GEMMs cover the first kGemmDim_ columns only
// (kGemmDim, kGemmDimV).
template <int kHeadDim_, int kHeadDimV_, typename Element_, int kConsumerWarpgroups_ = 2,
          int kLongKeyBlockN_ = 0, int kClusterM_ = 1, bool kMaskedInstance_ = false,
          bool kNarrowRows_ = false, int kCtasPerSm_ = 1, bool kDropout_ = false, int kGemmDim_ = 0>
struct ForwardConfig {
  using Element = Element_;
  static_assert(std::is_same_v<Element, __half> || std::is_same_v<Element, __nv_bfloat16>);
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kHeadDimV = kHeadDimV_;
  static_assert(kHeadDim % 64 == 0 && kHeadDim <= 256, "head dim must be 64, 128, 192 or 256");
  static_assert(kHeadDimV % 64 == 0 && kHeadDimV <= 256, "dv must be 64, 128, 192 or 256");
  // The head-dim columns of Q / K and of V / O that the GEMMs cover: S = Q K^T runs kGemmDim / 16 k-steps, P
  // V has N = kGemmDimV (plus the row sums' columns), O's accumulators and stores hold kGemmDimV columns.
  static constexpr int kGemmDim = kGemmDim_ != 0 ? kGemmDim_ : kHeadDim;
  static constexpr int kGemmDimV = kGemmDim_ != 0 ? kGemmDim_ : kHeadDimV;
  static constexpr bool kNarrowedGemm = kGemmDim_ != 0;
  static_assert(
      !kNarrowedGemm || (((kGemmDim_ == 96 && kHeadDim_ == 128) || (kGemmDim_ == 160 && kHeadDim_ == 192)) &&
                         kHeadDimV_ == kHeadDim_ && kConsumerWarpgroups_ == 2 && !kNarrowRows_ && !kDropout_),
      "the narrowed GEMMs: 96 columns of the d = dv = 128 two-consumer kernels, 160 of the 192 ones");
  // Large-V pairs (dv > d, FA3's "hdimv" cases): (64, 256); (64, 512) runs as two
  // launches of (64, 256) over the two column halves of V and O (forward_launch.h).
  static constexpr bool kLargeV = kHeadDimV > kHeadDim;

  // d = 256 with 64-key blocks (use_d256_block64 below): S 32 + P 16 + O 128 fp32 registers per
  // consumer thread (80 keys: 40 + 20 + 128); shared memory Q 64 KB + 2 stages x (K 32 + V 32 KB), O in
  // Q's rows as with 80 keys (a third stage or O's own buffer would need 256 KB).
  static constexpr bool kD256Block64 =
      kLongKeyBlockN_ == 64 && kHeadDim_ == 256 && kHeadDimV_ == 256 && kConsumerWarpgroups_ == 2;
  static constexpr bool kD64Alt = kLongKeyBlockN_ != 0 && kHeadDim_ == 64 && kHeadDimV_ == 64;
  static constexpr int kConsumerWarpgroups = kConsumerWarpgroups_;
  // One consumer warpgroup (kBlockM 64): the decode kernel (use_single_consumer below), d = dv = 64, 128 or
  // 256 (d = 256: S 40 + P 20 + O 128 registers per thread; Q 32 KB, two stages of K and V 40 KB each, O 32
  // KB of its own).
  static constexpr bool kSingleConsumer = kConsumerWarpgroups_ == 1;
  // The narrow decode tile (decode_consumer.h): S^T = K Q^T with 64 keys as the wgmma's M and the query rows
  // as N = kNarrowRowsMax, O^T = V^T P^T; 128-key blocks at d = 128 (two M tiles of S^T, one stmatrix.x4 of
  // P^T), 256-key ones at d = 64 (NARROW_D64_BLOCK_N: four M tiles, d = 128's bytes a block), 64-key ones at
  // d = 256 (one M tile: its two stages of 64 KB are as many bytes in flight as d = 128's, where two of 80
  // keys would not be a whole number of M tiles and three of 64 do not fit beside Q and O).
  static constexpr bool kNarrowRows = kNarrowRows_;
  static_assert(!kNarrowRows || (kSingleConsumer && kLongKeyBlockN_ == 0 && kHeadDim == kHeadDimV &&
                                 (kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256)),
                "the narrow tile is the d = dv = 64 / 128 / 256 decode kernel's");
  // Two CTAs a SM: each in half of the SM's shared memory and registers (__launch_bounds__(kThreads, 2):
  // 128 registers a thread, which the narrow consumer's few accumulators leave room for), with two stages
  // of 32 KB of K and V: 64-key blocks at d = 128, 128-key ones at d = 64. A SM then holds as many bytes in
  // flight as one CTA of the other kernel, over two tiles.
  static constexpr int kCtasPerSm = kCtasPerSm_;
  static_assert(kCtasPerSm == 1 || (kCtasPerSm == 2 && kNarrowRows && kHeadDim <= 128),
                "two CTAs a SM only for the narrow tile at d = 64 / 128");
  static_assert(
      kConsumerWarpgroups == 2 ||
          ((kConsumerWarpgroups == 3 || (kConsumerWarpgroups == 4 && kD64Alt)) && kHeadDim == 64 &&
           kHeadDimV == 64) ||
          (kSingleConsumer && kHeadDim == kHeadDimV &&
           (kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256) && kLongKeyBlockN_ == 0 && kClusterM_ == 1),
      "three or four consumer warpgroups only at d = 64 (their registers hold no more); one only at "
      "d = dv = 64, 128 or 256");
  static_assert(kConsumerWarpgroups <= kMaxConsumerWarpgroups);
  static constexpr int kThreads = 128 * (1 + kConsumerWarpgroups);
  static constexpr int kConsumerWarps = 4 * kConsumerWarpgroups;
  static constexpr int kBlockM = 64 * kConsumerWarpgroups;
  // Keys per pipeline stage: as many as keep S (kBlockN/2 fp32 per thread) and O
  // (kHeadDim/2 per thread) plus the bf16 P fragment within the consumer budget,
  // and the stages within shared memory.
  // (176 at d=128 was measured slower: O must then reuse Q's buffer, which
  // serialises the O store with the next tile's Q load; docs/kernel-notes-sm90.md.)
  // d=192: 96 (S 48 + P 24 + O 96 registers per thread; N = 96 is a generated wgmma shape).
  // (64, 256): O alone takes 128 registers per thread, so 64 keys (S 32 + P 16) and
  // three stages of K (8 KB) + V (32 KB) beside Q (16 KB) and O (64 KB).
  // d=64 with three consumers (160 registers each): FLASHATTN_SM90_D64_THREE_BLOCK_N (above).
  // d=128, long key sequences: kLongKeyBlockN_ (use_long_key_blocks).
  // d=64 alternative tiles (session 9, sm90r; use_d64_alt_tile): kLongKeyBlockN_ keys with two consumers
  // (240 registers) or four (kBlockM 256, 112 registers each). P stays in registers: at 160 or 192 keys with
  // two consumers it fits; three consumers beyond 96 keys need P in shared memory (branch sm90r, commit
  // 77d83b8: tied or lost, docs/kernel-notes-sm90.md session 9), and four beyond 64 keys spill.
  static_assert(!kD64Alt ||
                (kLongKeyBlockN_ % 32 == 0 && kLongKeyBlockN_ <= 192 && kConsumerWarpgroups_ != 3));
  static_assert(kLongKeyBlockN_ == 0 ||
                    (kHeadDim == 128 && kHeadDimV == 128 && kConsumerWarpgroups == 2 &&
                     kLongKeyBlockN_ % 16 == 0 && kLongKeyBlockN_ <= 192) ||
                    kD256Block64 || kD64Alt,
                "a long-key block only for the two-consumer d = 128 kernel, 64 keys only at d = 256");
  static constexpr bool kNarrowD64 = kNarrowRows && kHeadDim == 64 && kCtasPerSm == 1;  // NARROW_D64_BLOCK_N
  static constexpr int kDefaultBlockN =
      kLargeV || (kNarrowRows && kHeadDim == 256) || (kCtasPerSm == 2 && kHeadDim == 128)
          ? 64
          : (kNarrowD64 ? FLASHATTN_SM90_NARROW_D64_BLOCK_N
                        : (kConsumerWarpgroups == 3 ? FLASHATTN_SM90_D64_THREE_BLOCK_N
                                                    : (kHeadDim <= 128 ? 128 : (kHeadDim <= 192 ? 96 : 80))));
  static constexpr int kBlockN = kLongKeyBlockN_ != 0 ? kLongKeyBlockN_ : kDefaultBlockN;
  static constexpr int kStages =
      kLargeV ? 3 : (kNarrowD64 ? 512 / kBlockN : (kHeadDim <= 64 && kCtasPerSm == 1 ? 4 : 2));
  static_assert(!kNarrowD64 || kBlockN == 128 || kBlockN == 256, "NARROW_D64_BLOCK_N: 128 or 256 keys");
  // The long-key, cluster and three-consumer kernels serve dense K/V only (paged K/V runs the
  // two-consumer kernel: use_three_consumers): no paged instantiation of them.
  // (d = 256 with 64-key blocks has one: pages of 64..256 rows are then read as 64-row boxes; so has the
  // one-consumer decode kernel: a paged cache is decoding's common case.)
  static constexpr bool kHasPagedKernel = (kLongKeyBlockN_ == 0 || kD256Block64) && kClusterM_ == 1 &&
                                          (kConsumerWarpgroups_ == 2 || kSingleConsumer) && !kDropout_;
  // The dropout instances: two consumers, one CTA, no split of any kind (their paged problems run on
  // cuda_sm80: backend.cu unsupported_reason).
  static constexpr bool kDropout = kDropout_;
  static_assert(!kDropout || (kConsumerWarpgroups_ == 2 && kClusterM_ == 1 && !kNarrowRows_),
                "dropout runs on the two-consumer kernels of one CTA");
  // Cluster of kClusterM CTAs on adjacent query blocks of one head (tile_scheduler.h
  // tile_work): each CTA's producer loads 1/kClusterM of every K and V block (kBlockN /
  // kClusterM rows, or kChunks / kClusterM column chunks: kKVSliceRows below) and multicasts it
  // to all of them, so each block crosses from L2 once per cluster instead of once per CTA.
  // Every consumer warp releases a stage on the empty barrier of every CTA of the cluster (a
  // peer's producer overwrites its rows there). Dense problems of one length, unmasked or (the
  // masked instances) causal (forward_launch.h run_forward); d = 256 unmasked only behind
  // FLASHATTN_SM90_KV_MULTICAST_D256.
  static constexpr int kClusterM = kClusterM_;
  static_assert(
      kClusterM == 1 ||
          (kClusterM == 2 && (kLongKeyBlockN_ == 0 || (kD256Block64 && kMaskedInstance_)) &&
           ((kConsumerWarpgroups == 2 &&
             ((kHeadDim == 128 && kHeadDimV == 128) || (kHeadDim == 256 && kHeadDimV == 256))) ||
            (kConsumerWarpgroups == 3 && kHeadDim == 64 && kHeadDimV == 64 && !kMaskedInstance_))),
      "K/V multicast only for the d = 128 and d = 256 kernels and the unmasked d = 64 three-consumer one");

  // setmaxnreg split: 128 * 24 + 256 * 240 = 64512 <= 65536 registers per SM
  // with two consumers; 128 * 24 + 384 * 160 = 64512 with three (d = 64: S 64 +
  // P 32 + O 32 registers per thread). The CTA is launched with kEntryRegisters per
  // thread (__launch_bounds__(kThreads, 1): 168 with 384 threads, 128 with 512);
  // what the producer gives back is all the consumers may take.
  // (40 / 232 removed the producer's last spills but cost 4-7% on an H200,
  // 2026-11-22 (sm90c): the consumers lose more at 232 than the producer's one
  // reload per tile costs. The dense kernels no longer contain the paged producer,
  // which took the dense producer from 28 to 72 B of spills: forward_kernel.h.)
  static constexpr int kEntryRegisters = (65536 / kThreads) / 8 * 8;
  // With one consumer warpgroup every thread of the CTA may hold ptxas's maximum of 255 registers
  // (256 x 255 <= 65536): nothing to move between the warpgroups, no setmaxnreg (forward_kernel.h).
  static constexpr bool kMovesRegisters = !kSingleConsumer;
  static constexpr int kProducerRegisters = 24;
  // Four consumers (kD64Alt): 128 * 24 + 512 * 112 = 60416 <= 640 * 96 (S 32 + P 16 + O 36 at 64 keys).
  static constexpr int kConsumerRegisters =
      kConsumerWarpgroups == 4 ? 112 : (kConsumerWarpgroups == 3 ? 160 : 240);
  static_assert(!kMovesRegisters || 128 * kConsumerWarpgroups * (kConsumerRegisters - kEntryRegisters) <=
                                        128 * (kEntryRegisters - kProducerRegisters),
                "the consumers may take only what the producer gives back");
  // The paged producer (a warp: a table read per TMA box, and the gather of rows no box covers;
  // producer.h) spills at 24 (44 B); paged K/V is often memory-bound (decode), where the consumers'
  // last 8 registers matter least. The kernels with a paged instance (kHasPagedKernel) that move registers.
  static constexpr int kPagedProducerRegisters = 40;
  static constexpr int kPagedConsumerRegisters = 232;
  static_assert(!kHasPagedKernel || !kMovesRegisters ||
                128 * kConsumerWarpgroups * (kPagedConsumerRegisters - kEntryRegisters) <=
                    128 * (kEntryRegisters - kPagedProducerRegisters));
  // Rebuild Q's wgmma descriptors for every key block instead of keeping all
  // kHeadDim/16 of them live (consumer.h gemm_qk): at d >= 192 and with three
  // consumers they cost the accumulators registers (spills: d256 120 B -> 0,
  // +7-14% measured on an H200, 2026-11-22).
  static constexpr bool kRebuildQDescriptors =
      kHeadDim >= 192 || kConsumerWarpgroups >= 3 || kBlockN > FLASHATTN_SM90_KEEP_Q_DESCRIPTORS_MAX_BLOCK_N;
  // Rescale O only when a row maximum grew by more than 2^8 (softmax.h): saves dv/2
  // multiplications per thread and block for a vote and a comparison; measured on an
  // H200 (2026-11-22, sm90c): +3-6% at d 256, within noise at d 128, -3.5% at d 64; again
  // at d 128 (session 6, sm90L, same-process A/B): off is 5% slower (0.95 non-causal,
  // 0.945 causal, 8 of 8 rows below the noise control).
  // FLASHATTN_SM90_RESCALE_BY_SUM_D64 above: the d = dv = 64 kernels too, with the by-sum softmax.
  static constexpr bool kBySumD64 =
      FLASHATTN_SM90_RESCALE_BY_SUM_D64 != 0 && kHeadDim == 64 && kHeadDimV == 64 && !kLargeV;
  static constexpr bool kConditionalRescale =
      kHeadDimV >= FLASHATTN_SM90_CONDITIONAL_RESCALE_MIN_DV || kBySumD64;
  // Row maxima / sums of a block as trees, not chains (softmax.h): measured on an H200
  // (2026-11-22, sm90d, one same-process A/B): +1.9% at d 64 (10 of 12 rows), +1.7%
  // on the d 128 rows it was isolated on; d > 128 not measured.
  static constexpr bool kTreeReductions =
      kHeadDim <= FLASHATTN_SM90_TREE_REDUCTIONS_MAX_D && kHeadDimV <= FLASHATTN_SM90_TREE_REDUCTIONS_MAX_D;
  // Row sums on the tensor cores (FLASHATTN_SM90_ROW_SUM_MMA above): the P V GEMM's N is dv + 8
  // and the accumulator's last 8 columns hold each row's sum; kOnesBytes of shared memory hold
  // two swizzle atoms of ones (8 key rows x 64 columns each), the 16 key rows one k16 step of
  // the P V GEMM reads as its second 64-column chunk (consumer.h gemm_pv).
  // FLASHATTN_SM90_ROW_SUM_D128 above: the d = dv = 128 two-consumer kernels' sums from a third chunk of the
  // P V GEMM's B operand.
  // (Not with narrowed GEMMs: the ones would be the P V GEMM's columns 96-103, inside V's second chunk.)
  static constexpr bool kRowSumFused = FLASHATTN_SM90_ROW_SUM_D128 != 0 && kHeadDim == 128 &&
                                       kHeadDimV == 128 && !kLargeV && kConsumerWarpgroups == 2 &&
                                       kLongKeyBlockN_ == 0 && !kDropout && !kNarrowedGemm;
  // FLASHATTN_SM90_REGISTER_Q above: S = Q K^T with Q's A fragments in registers in the d = dv = 128
  // two-consumer kernels of 128-key blocks (their paged instances included), and those of Q's first k-steps
  // in the masked instances of the d = dv = 256 two-consumer kernels (FLASHATTN_SM90_REGISTER_Q_D256), and
  // all of them in the (192, 128) two-consumer kernels (_D192). Narrowed GEMMs: all of their 6.
  static constexpr int kRegisterQSteps =
      (FLASHATTN_SM90_REGISTER_Q != 0 && kHeadDim == 128 && kHeadDimV == 128 && kConsumerWarpgroups == 2 &&
       kLongKeyBlockN_ == 0)
          ? kGemmDim / 16
      : (kHeadDim == 256 && kHeadDimV == 256 && kConsumerWarpgroups == 2 && kMaskedInstance_)
          ? FLASHATTN_SM90_REGISTER_Q_D256
      : (FLASHATTN_SM90_REGISTER_Q_D192 != 0 && kHeadDim == 192 && kHeadDimV == 128 &&
         kConsumerWarpgroups == 2)
          ? 12
          : 0;
  static_assert((kRegisterQSteps % 4 == 0 || kRegisterQSteps == kGemmDim / 16) &&
                    kRegisterQSteps <= kGemmDim / 16,
                "whole 64-column chunks of Q, or all of its k-steps");
  static constexpr int kQFragmentSteps = kRegisterQSteps > 0 ? kRegisterQSteps : 1;
  static constexpr bool kRowSumMma = (kHeadDimV == 64 && !kLargeV && !kNarrowRows && !kDropout &&
                                      (kConsumerWarpgroups >= 4   ? FLASHATTN_SM90_ROW_SUM_MMA_FOUR
                                       : kConsumerWarpgroups == 3 ? FLASHATTN_SM90_ROW_SUM_MMA_THREE
                                                                  : FLASHATTN_SM90_ROW_SUM_MMA) != 0) ||
                                     kRowSumFused;
  static constexpr int kPVN = kRowSumMma ? kGemmDimV + 8 : kGemmDimV;
  // FLASHATTN_SM90_RESCALE_BY_SUM above (needs the conditional rescale; with the row sums on the tensor cores
  // the trigger is the bit test below).
  static constexpr bool kRescaleBySum =
      kConditionalRescale &&
      (FLASHATTN_SM90_RESCALE_BY_SUM >= 2 ||
       (FLASHATTN_SM90_RESCALE_BY_SUM == 1 &&
        ((kHeadDim == 128 && kHeadDimV == 128) || (kHeadDim == 256 && kHeadDimV == 256) || kBySumD64)));
  // The bit-test trigger fires at a packed probability of 2 or more; taking every probability against its
  // row's reference + kProbabilityShift (log2 units: P scaled by 2^-shift, numerator and tensor-core sums
  // alike, which softmax_finalize then expresses against reference + shift) moves that to 2^(shift + 1) of
  // the reference. bf16 (8 exponent bits): 7, the sum trigger's 2^8. fp16 (5): 3, so that the probabilities
  // far below the maximum keep their subnormal resolution (2^-24 absolute).
  static constexpr int kProbabilityShift =
      kRescaleBySum && kRowSumMma ? (std::is_same_v<Element, __half> ? 3 : 7) : 0;
  static constexpr int kOnesBytes = kRowSumMma && !kRowSumFused ? 2048 : 0;
  // Per-block decisions made while S runs (FLASHATTN_SM90_EARLY_BLOCK_FLAGS above).
  static constexpr bool kEarlyBlockFlags = FLASHATTN_SM90_EARLY_BLOCK_FLAGS != 0;
  // Mask decisions per tile (FLASHATTN_SM90_TILE_MASK_RANGE{,_THREE} above).
  static constexpr bool kTileMaskRange =
      kConsumerWarpgroups >= 3
          ? FLASHATTN_SM90_TILE_MASK_RANGE_THREE != 0
          : FLASHATTN_SM90_TILE_MASK_RANGE >= 2 ||
                (FLASHATTN_SM90_TILE_MASK_RANGE == 1 && kHeadDim == 128 && kHeadDimV == 128);
  // How masked blocks test their scores (FLASHATTN_SM90_MASK_FORM_* above).
  static constexpr int kMaskForm =
      kHeadDim == 128 && kHeadDimV == 128 ? FLASHATTN_SM90_MASK_FORM_D128 : FLASHATTN_SM90_MASK_FORM_OTHER;

  // Tiles are stored as kChunks column chunks of 64 elements (128 bytes, the
  // width of one 128B-swizzle row), each chunk a [rows][64] block: exactly what
  // a TMA box of {64, rows} with CU_TENSOR_MAP_SWIZZLE_128B writes.
  static constexpr int kChunkCols = 64;
  static constexpr int kChunks = kHeadDim / kChunkCols;    // of Q and K
  static constexpr int kChunksV = kHeadDimV / kChunkCols;  // of V and O
  static constexpr int kRowBytes = kChunkCols * 2;
  static constexpr int kQBytes = kBlockM * kHeadDim * 2;
  static constexpr int kKVBytes = kBlockN * kHeadDim * 2;  // one K stage
  static constexpr int kVBytes = kBlockN * kHeadDimV * 2;  // one V stage's data (the bytes its loads bring)
  static constexpr int kOBytes = kBlockM * kHeadDimV * 2;
  static constexpr int kQChunkBytes = kBlockM * kRowBytes;
  static constexpr int kKVChunkBytes = kBlockN * kRowBytes;  // K and V chunks alike
  static_assert(kKVChunkBytes % 1024 == 0, "swizzle atoms must stay 1024-byte aligned");
  // One CTA's share of a K/V block under multicast: rows [rank * kBlockN / kClusterM, ...) of every chunk
  // where that slice is a whole number of 1 KB swizzle atoms (d = 128: 64 of 128 rows), else whole chunks
  // c with c % kClusterM == rank (kMulticastByChunk; d = 256: 80-row blocks, chunks 0 / 2 and 1 / 3).
  static constexpr bool kMulticastByChunk = kClusterM > 1 && (kBlockN / kClusterM * kRowBytes) % 1024 != 0;
  static constexpr int kKVSliceRows = kMulticastByChunk ? kBlockN : kBlockN / kClusterM;
  static constexpr int kKVSliceBytes = kKVSliceRows * kRowBytes;
  static_assert(kKVSliceBytes % 1024 == 0, "a multicast slice must start on a swizzle atom");
  static_assert(!kMulticastByChunk || (kChunks % kClusterM == 0 && kChunksV % kClusterM == 0),
                "chunk multicast needs the chunks of K and V to divide among the cluster");

  // Shared memory: [Q][K stages][V stages][O][barriers]. O gets its own buffer
  // when it fits (its TMA store then overlaps the next tile's Q load); at d=256 it
  // reuses Q's rows (each consumer stores over the 64 Q rows only it read).
  // (228 KB a SM, of which 1 KB each CTA's reserve: 113 KB for each of two.)
  static constexpr int kSmemLimit = kCtasPerSm == 1 ? 227 * 1024 : 113 * 1024;
  static constexpr int kQOffset = 0;
  static constexpr int kKOffset = kQOffset + kQBytes;
  static constexpr int kVOffset = kKOffset + kStages * kKVBytes;
  // kRowSumFused: each V stage is followed by a chunk of ones, read as the P V GEMM's third chunk of B.
  static constexpr int kVStageBytes = kVBytes + (kRowSumFused ? kKVChunkBytes : 0);
  static constexpr int kOEnd = kVOffset + kStages * kVStageBytes;
  // FLASHATTN_SM90_SPLIT_Q: kQParts boxes of kQBoxRows rows, each with its own q_full / q_empty.
  static constexpr bool kSplitQ =
      FLASHATTN_SM90_SPLIT_Q >= 2 ||
      (FLASHATTN_SM90_SPLIT_Q == 1 && kHeadDim == kHeadDimV && (kHeadDim == 64 || kHeadDim == 256));
  static constexpr int kQParts = kSplitQ ? kConsumerWarpgroups : 1;
  static constexpr int kQBoxRows = kBlockM / kQParts;
  // FLASHATTN_SM90_DECODED_HANDOFF above (the paged kernels keep the index: forward_kernel.h; the decode
  // kernels too: a split piece's key blocks are not its tile's, split_kv.h).
  static constexpr bool kDecodedHandoff =
      !kSingleConsumer && (FLASHATTN_SM90_DECODED_HANDOFF >= 2 ||
                           (FLASHATTN_SM90_DECODED_HANDOFF == 1 && kHeadDim == 64 && kHeadDimV == 64));
  // The barriers + the tile-index slot (kSplitQ: + a q_full / q_empty pair per part; kSingleConsumer: +
  // the paged producer's tail_full; kNarrowRows: + cluster_full; pipeline.h);
  // kDecodedHandoff: then the decoded tile's 48 bytes, 16-byte aligned (pipeline.h decoded_slot).
  static constexpr int kIndexSlotBytes = 8 * (4 + 4 * kStages) + 8 + (kSplitQ ? 16 * kQParts : 0) +
                                         (kSingleConsumer ? 8 : 0) + (kNarrowRows ? 8 : 0);
  static constexpr int kDecodedSlotOffset = (kIndexSlotBytes + 15) / 16 * 16;
  static constexpr int kBarrierBytes = kDecodedHandoff ? kDecodedSlotOffset + 48 : kIndexSlotBytes;
  static constexpr bool kSeparateO = kOEnd + kOBytes + kOnesBytes + kBarrierBytes + 1024 <= kSmemLimit;
  // FLASHATTN_SM90_O_OVER_V above: consumer c's O over the V stage of the c-th V-ring use after the tile's
  // blocks, its 64 rows at the top of each of the stage's column chunks (chunk stride kKVChunkBytes).
  static constexpr bool kOOverV =
      !kSeparateO && kClusterM_ == 1 && !kMaskedInstance_ && kStages == 2 && kConsumerWarpgroups == 2 &&
      kBlockN >= 64 &&
      (FLASHATTN_SM90_O_OVER_V >= 2 || (FLASHATTN_SM90_O_OVER_V == 1 && kHeadDim == 256 && kHeadDimV == 256));
  // Q's buffer is free once the tile's last S GEMM completed (q_empty arrives then), not after the O store.
  static constexpr bool kQFreeAfterS = kSeparateO || kOOverV;
  // FLASHATTN_SM90_K_LOOKAHEAD above (the dense producer; the paged one loads a block's K and V together).
  static constexpr bool kKLookahead =
      kOOverV || FLASHATTN_SM90_K_LOOKAHEAD >= 2 ||
      (FLASHATTN_SM90_K_LOOKAHEAD == 1 && kHeadDim == 256 && kHeadDimV == 256 && kBlockN == 64);
  // FLASHATTN_SM90_PREFETCH_O_OVER_V and PREFETCH_NEXT_TILE above.
  static constexpr bool kPrefetchOOverV =
      kOOverV &&
      (FLASHATTN_SM90_PREFETCH_O_OVER_V >= 2 || (FLASHATTN_SM90_PREFETCH_O_OVER_V == 1 && kBlockN > 64));
  static constexpr bool kPrefetchNextTile =
      FLASHATTN_SM90_PREFETCH_NEXT_TILE >= 2 || kPrefetchOOverV ||
      (FLASHATTN_SM90_PREFETCH_NEXT_TILE == 1 &&
       ((kBlockN == 64 && !kOOverV && !(kHeadDim == 64 && kMaskedInstance_)) ||
        (kHeadDim == 128 && kHeadDimV == 128 && kConsumerWarpgroups == 2 && !kMaskedInstance_)));
  // FLASHATTN_SM90_PREFETCH_EARLY above.
  static constexpr bool kPrefetchEarly =
      kPrefetchNextTile && (FLASHATTN_SM90_PREFETCH_EARLY >= 2 || kPrefetchOOverV ||
                            (FLASHATTN_SM90_PREFETCH_EARLY == 1 && kHeadDim == 128 && kHeadDimV == 128 &&
                             kConsumerWarpgroups == 2));
  static constexpr int kPrefetchAfterBlocks =
      kOOverV ? FLASHATTN_SM90_PREFETCH_AFTER_BLOCKS_O_OVER_V : FLASHATTN_SM90_PREFETCH_AFTER_BLOCKS;
  static constexpr int kPrefetchAfterBlocksWindowed = FLASHATTN_SM90_PREFETCH_AFTER_BLOCKS_WINDOWED;
  static_assert(kPrefetchAfterBlocks >= 1 && kPrefetchAfterBlocksWindowed >= 1);
  // The late prefetch (the masked d256 64-key kernels) gains on windowed problems up to 4k: no limit there.
  static constexpr int kPrefetchWindowedMaxSeqlenK =
      kPrefetchEarly ? FLASHATTN_SM90_PREFETCH_WINDOWED_MAX_SEQLEN : 0;
  // Issue the next tile's first S = Q K^T before this tile's epilogue (consumer.h), so that
  // the O normalisation, its shared-memory write and the TMA store run beside a GEMM
  // rather than between two. Needs the next Q before this tile's O is stored, so only where
  // O has its own buffer (when O reuses Q's rows the store must read them before the next
  // Q may land). kKVBytes <= kQBytes: a tile without key blocks multiplies Q's buffer by
  // itself in place of a K block (consumer.h begin_tile).
  // (O stored from registers straight to global memory at d 192 / 256, so that Q is free after
  // the last S GEMM and this applies there too, was 8-17% slower: session 8, helper sm90o.)
  static constexpr bool kEarlyNextS = FLASHATTN_SM90_EARLY_NEXT_S != 0 && kQFreeAfterS && kKVBytes <= kQBytes;
  static constexpr bool kEarlyNextTile = kEarlyNextS && FLASHATTN_SM90_EARLY_NEXT_S >= 2;
  static constexpr int kOOffset = kSeparateO ? kOEnd : kQOffset;
  // The ones block (kRowSumMma) follows O, 1024-byte aligned like every buffer before it,
  // after every V stage: a V descriptor reaches it with a positive leading offset.
  static constexpr int kOnesOffset = kSeparateO ? kOEnd + kOBytes : kOEnd;
  // kNarrowRows: P^T's two buffers (each kNarrowRowsMax rows of kBlockN keys, 128B-swizzled 64-key chunks
  // of 1 KB: the O^T GEMM's K-major B operand), then the row-maximum exchange's two buffers (per warp one
  // float per row) and the row-sum one (decode_consumer.h).
  static constexpr int kNarrowPBytes = kNarrowRows ? kBlockN / 64 * 1024 : 0;
  static constexpr int kNarrowOffset = kOnesOffset + kOnesBytes;
  static constexpr int kNarrowExchangeOffset = kNarrowOffset + 2 * kNarrowPBytes;
  static constexpr int kNarrowBytes = kNarrowRows ? 2 * kNarrowPBytes + 3 * 4 * 8 * 4 : 0;
  // kNarrowRows with CLUSTER_COMBINE: the slots of a cluster's pieces (cluster_slot_bytes each, by the
  // launch's rows), received by the rows' owners (decode_consumer.h): what fits beside the rest, up to
  // kMaxClusterPieces slots of kNarrowRowsMax rows (at 8 rows 16 pieces at d = 64, 15 at d = 128, 3 at d =
  // 256; at 2 rows 15 at d = 256).
  static constexpr int kClusterRecordsOffset = kNarrowOffset + (kNarrowBytes + 15) / 16 * 16;
  static constexpr int kClusterFreeBytes = kSmemLimit - (kClusterRecordsOffset + kBarrierBytes + 1024);
  // (Not in the kernel of two CTAs a SM: it runs more tiles than SMs, where no tile's pieces are clustered.)
  static constexpr bool kClusterPieces =
      kNarrowRows && kCtasPerSm == 1 && FLASHATTN_SM90_SPLIT_KV != 0 && FLASHATTN_SM90_CLUSTER_COMBINE != 0;
  static constexpr int kClusterRecordsBytes =
      kClusterPieces ? std::min(kClusterFreeBytes / 16 * 16,
                                cluster_slot_bytes(kNarrowRowsMax, kHeadDimV) * FLASHATTN_SM90_CLUSTER_SLOTS)
                     : 0;
  // Host: the cluster counts whose records of `rows` rows the slots hold (none without the cluster combine):
  // whole records, and where those hold fewer pieces than rows (d = 256 at 5-8 rows), single rows from `rows`
  // pieces up (decode_consumer.h: a CTA per row receives its row alone). Elsewhere the counts of whole
  // records, which sessions 50-52 measured, stand.
  static constexpr ClusterSlots cluster_slots(int rows) {
    const int gathered =
        std::min(kMaxClusterPieces, kClusterRecordsBytes / cluster_slot_bytes(rows, kHeadDimV));
    const int spread = gathered >= rows ? 0
                                        : std::min(kMaxClusterPieces,
                                                   kClusterRecordsBytes / cluster_slot_bytes(1, kHeadDimV));
    return {gathered, rows, spread};
  }
  static constexpr int kBarrierOffset = kClusterRecordsOffset + kClusterRecordsBytes;
  static_assert(kNarrowOffset % 1024 == 0 && kNarrowRowsMax * 128 == 1024,
                "P^T's chunks are whole swizzle atoms of kNarrowRowsMax rows");
  // +1024: the dynamic buffer is aligned up to a swizzle atom at run time.
  static constexpr int kSmemBytes = kBarrierOffset + kBarrierBytes + 1024;
  static_assert(kSmemBytes <= kSmemLimit, "shared-memory layout exceeds the sm_90 limit");
  static_assert(kOnesOffset % 1024 == 0 && kOnesOffset - kVOffset < (1 << 18),
                "the ones block must be a swizzle atom within a descriptor's offset field of V");
  static_assert(kSeparateO || kOBytes <= kQBytes, "O reuses Q's buffer only when it fits there");
  // O layout per consumer warpgroup: separate buffer [warpgroup][chunk][64 rows];
  // reusing Q: Q's [chunk][kBlockM rows] with the warpgroup's 64 rows inside;
  // kOOverV: a V stage's [chunk][kBlockN rows] with O's 64 rows at the top (epilogue.h store_output).
  static constexpr int kOWarpgroupStride = kSeparateO ? kChunksV * 64 * kRowBytes : 64 * kRowBytes;
  static constexpr int kOChunkStride = kSeparateO ? 64 * kRowBytes : kOOverV ? kKVChunkBytes : kQChunkBytes;

  // The tile boundary (FLASHATTN_SM90_EARLY_DECODE, _STMATRIX_O, _FAST_FINALIZE, _FIRST_K_BEFORE_Q
  // above).
  static constexpr bool kEarlyDecode = FLASHATTN_SM90_EARLY_DECODE != 0;
  static constexpr bool kStmatrixO = FLASHATTN_SM90_STMATRIX_O != 0;
  static constexpr bool kFastFinalize = FLASHATTN_SM90_FAST_FINALIZE != 0;
  // K/V multicast (kClusterM 2): each stage's empty barrier counts the consumers of both CTAs, so an early K
  // load waits for the same releases as any other. Session 24 (s24_paired.sh, interleaved timing, two
  // passes): the masked cluster instances +0.2..+0.5% (d256 causal 4k +0.53%, d128 causal 8k / 16k +0.3 /
  // +0.2%), the unmasked ones -0.1..-0.35% (d128 non-causal 2k-8k); hence 1 = single-CTA and masked cluster
  // instances, 2 = every instance.
  static constexpr bool kFirstKBeforeQ =
      FLASHATTN_SM90_FIRST_K_BEFORE_Q != 0 &&
      (kClusterM == 1 || kMaskedInstance_ || FLASHATTN_SM90_FIRST_K_BEFORE_Q >= 2);
  // FLASHATTN_SM90_SPLIT_TAIL above: the unmasked d = dv = 128 multicast instance (O has its own buffer
  // there, not V's stages; the consumer's decoding is its own, not the producer's handoff).
  static constexpr bool kSplitTail = FLASHATTN_SM90_SPLIT_TAIL != 0 && kClusterM_ == 2 && !kMaskedInstance_ &&
                                     kHeadDim == 128 && kHeadDimV == 128 && kConsumerWarpgroups == 2;
  static_assert(!kSplitTail || (kSeparateO && !kOOverV && !kDecodedHandoff), "split_tail.h assumes these");
  // FLASHATTN_SM90_SPLIT_KV above: the one-consumer decode kernel (its pieces' rows go through split_kv.h's
  // combine instead of store_output when the launch splits).
  static constexpr bool kSplitKV = FLASHATTN_SM90_SPLIT_KV != 0 && kSingleConsumer;
  // FLASHATTN_SM90_CACHE_LENGTHS above: the decode kernels (a template flag, so that the other kernels'
  // code does not carry the branch).
  static constexpr bool kCacheLengths = FLASHATTN_SM90_CACHE_LENGTHS != 0 && kSingleConsumer;
  static_assert(!kSplitKV || (kClusterM_ == 1 && !kOOverV && !kDecodedHandoff && !kSplitTail),
                "split_kv.h assumes these");
  // FLASHATTN_SM90_UNIFORM_CONSUMER above.
  static constexpr bool kUniformConsumer = FLASHATTN_SM90_UNIFORM_CONSUMER != 0;
  // FLASHATTN_SM90_CONSUMER_KEY_RANGE and _FOUR above (two-consumer kernels, and the four-consumer
  // kernel's masked instance). The unmasked K/V multicast instances have none (every consumer's range is
  // the tile's); the masked ones (causal problems, KV_MULTICAST_CAUSAL below) need them: the lower query
  // block of a cluster walks the pair's key blocks (score_mask.h key_block_range), more than its rows see.
  static constexpr bool kConsumerKeyRange =
      (kConsumerWarpgroups == 2 && kClusterM == 1 &&
       (FLASHATTN_SM90_CONSUMER_KEY_RANGE >= 2 ||
        (FLASHATTN_SM90_CONSUMER_KEY_RANGE == 1 && kHeadDim == 256 && kHeadDimV == 256))) ||
      (kConsumerWarpgroups == 4 && kMaskedInstance_ && FLASHATTN_SM90_CONSUMER_KEY_RANGE_FOUR != 0) ||
      (kClusterM > 1 && kMaskedInstance_);
  // A consumer's rows end at most (kConsumerWarpgroups - 1) * 64 rows before the tile's, and the tile's at
  // most (kClusterM - 1) * kBlockM before the cluster's, so it skips at most that many keys' worth of top
  // blocks; their V stages are released only after its first S (consumer.h skip_top_keys), which the
  // producer reaches only if they fit in the ring.
  // Where more may be skipped than the ring holds (the d = 256 masked cluster instance: up to three 80-key
  // blocks with two stages), the skipped blocks' V stages are released as they are skipped instead, each once
  // it has landed (kEagerSkipRelease; the first S then also waits for those V loads).
  static constexpr bool kEagerSkipRelease =
      kConsumerKeyRange &&
      ((kConsumerWarpgroups - 1) * 64 + (kClusterM - 1) * kBlockM + kBlockN - 1) / kBlockN > kStages;
  // consumer.h skip_top_keys: the eager releases walk the V stages at the K ring's positions.
  static_assert(!(kOOverV && kEagerSkipRelease), "O over V needs the V ring where the eager releases are");
};

// The forward with dropout (forward_hdim*_*_dropout.cu, forward_dropout.h): one instance per head dims and
// dtype, for every problem of those (masked or not, any length, batched or variable-length): the two-consumer
// kernel's default tile, at d = dv = 256 its masked instance (O over V serves unmasked problems only). FA3
// has no dropout; cuDNN's forward has (at 0.30-0.57x of its plain speed on an H200, session 68), and
// FlashAttention 2's is its Ampere kernel, as cuda_sm80's is here.
template <int kHeadDim, int kHeadDimV, typename Element>
using DropoutConfig =
    ForwardConfig<kHeadDim, kHeadDimV, Element, 2, 0, 1, kHeadDim == 256 && kHeadDimV == 256, false, 1, true>;

// d = 64: three consumer warpgroups (kBlockM 192, kBlockN 96 until session 14, now
// FLASHATTN_SM90_D64_THREE_BLOCK_N) for long query sequences, two (128 x 128) for short
// ones. Measured with 96-key blocks (the numbers below), where 192 x 96 tiles waste up to a
// fifth of their work on rows and keys past the end (512 = 2.67 x 192 = 5.33 x 96)
// and leave fewer tiles to balance. Measured on an H200 (docs/performance-sm90.md,
// 2026-11-22, session 3): three +3% at 4k, +7% at 8k-16k non-causal; -15% at 512;
// causal even at 8k, +2% at 16k. Since the three-consumer kernel's row sums moved to
// the tensor cores (session 5, +6-7%), it also wins at 2k non-causal (+5%, three
// passes) and 8k causal (+4%), not at 1k non-causal (-7%) or 4k causal (+1%): the
// thresholds 2048 / 8192. Host side; seqlen_q is the longest sequence's. Macros so
// that an A/B build can move them (bench/sm90_three_consumer_threshold.sh).
#ifndef FLASHATTN_SM90_THREE_CONSUMERS_MIN_SQ
#define FLASHATTN_SM90_THREE_CONSUMERS_MIN_SQ 2048
#endif
#ifndef FLASHATTN_SM90_THREE_CONSUMERS_MIN_SQ_MASKED
#define FLASHATTN_SM90_THREE_CONSUMERS_MIN_SQ_MASKED 8192
#endif
// Paged K/V keeps the two-consumer kernel (128-key blocks, TMA boxes of up to 128 rows; the
// three-consumer kernel has no paged instance). Measured on an H200 (session 7, fp16, 8192 keys b1 h4 /
// 4096 keys b4 h16, us): before paged boxes, three consumers' 96-key blocks straddled pages of 128 and
// 256 and were gathered (1112 and 668 us against 211 dense at b1 h4); with boxes, pages of 192 on three
// consumers 240.9 / 704.5 against two 168.7 / 631.7 (helper sm90p).
inline bool use_three_consumers(int head_dim, long long seqlen_q, bool masked, bool paged) {
  return head_dim == 64 && !paged &&
         seqlen_q >=
             (masked ? FLASHATTN_SM90_THREE_CONSUMERS_MIN_SQ_MASKED : FLASHATTN_SM90_THREE_CONSUMERS_MIN_SQ);
}

// Session 9, helper sm90r (issue 6): other d = 64 tiles for a range of lengths, per mask kind (unmasked /
// causal or windowed): the key block width (0 = never: the kernels of use_three_consumers), the consumer
// warpgroups (2: 240 registers each; 4: kBlockM 256, 112 each) and the query lengths [MIN, MAX) that get it
// (MAX 0: no bound; the keys must number at least MIN too). Dense K/V only. Measured on an H200 (2026-11-22,
// two runs, cuDNN and a control build in the same process; docs/performance-sm90.md "Session 9, helper
// sm90r"): four consumers with 64-key blocks, P in registers, against the defaults before (two consumers 128
// x 128 below 2k, three 192 x 96 above) +7..9% at 1k, +6.5% at 2k, +3..4% at 4k non-causal (above the better
// of base and control in both passes), 8k / 16k within noise; causal -5% at 1k, -2% at 2k, +2.5% at 4k, -1%
// at 8k / 16k. Wider key blocks (two consumers at 160 / 192 keys, three at 128 with P in shared memory) lost
// or tied everywhere. Integrator A/B (bench/integration/s9_d64_alt.sh, two passes): non-causal 512 +15% (383
// against 332 for the old kernel and its control; 9% above the better of the two in each pass), causal 4k
// +0.4 / +0.7% above the better identical column. With per-consumer key ranges on its masked instance
// (FLASHATTN_SM90_CONSUMER_KEY_RANGE_FOUR above, bench/integration/s9_d64_kr4.sh) causal gains +3..7% at
// 512-4k and +1.8% at 8k, 16k even. So: four consumers with 64-key blocks for unmasked queries of 512 up to
// 8191 (8k and beyond keep three consumers: session 14's s14_d64alt.sh read 0.996 / 0.998 at 8k / 16k with
// four) and masked ones from 512 at any length (session 14, s14_d64cond.sh and s14_d64alt.sh: causal 16k
// +2.9% over three passes, 5 of 5 readings above every reading of the three-consumer build and its control;
// until then 16k and beyond kept three consumers). Host side; lengths are the longest sequence's. Macros so
// that an A/B build can move them (bench/sm90r_run2.sh; there named FLASHATTN_SM90_D64_WIDE_*).
#ifndef FLASHATTN_SM90_D64_ALT_BLOCK_N
#define FLASHATTN_SM90_D64_ALT_BLOCK_N 64
#endif
#ifndef FLASHATTN_SM90_D64_ALT_CONSUMERS
#define FLASHATTN_SM90_D64_ALT_CONSUMERS 4
#endif
#ifndef FLASHATTN_SM90_D64_ALT_MIN_SEQLEN
#define FLASHATTN_SM90_D64_ALT_MIN_SEQLEN 512
#endif
#ifndef FLASHATTN_SM90_D64_ALT_MAX_SEQLEN
#define FLASHATTN_SM90_D64_ALT_MAX_SEQLEN 8192
#endif
#ifndef FLASHATTN_SM90_D64_ALT_BLOCK_N_MASKED
#define FLASHATTN_SM90_D64_ALT_BLOCK_N_MASKED 64
#endif
#ifndef FLASHATTN_SM90_D64_ALT_CONSUMERS_MASKED
#define FLASHATTN_SM90_D64_ALT_CONSUMERS_MASKED 4
#endif
#ifndef FLASHATTN_SM90_D64_ALT_MIN_SEQLEN_MASKED
#define FLASHATTN_SM90_D64_ALT_MIN_SEQLEN_MASKED 512
#endif
#ifndef FLASHATTN_SM90_D64_ALT_MAX_SEQLEN_MASKED
#define FLASHATTN_SM90_D64_ALT_MAX_SEQLEN_MASKED 0
#endif
inline bool use_d64_alt_tile(int head_dim, int head_dim_v, long long seqlen_q, long long seqlen_k,
                             bool masked, bool paged) {
  const int block_n = masked ? FLASHATTN_SM90_D64_ALT_BLOCK_N_MASKED : FLASHATTN_SM90_D64_ALT_BLOCK_N;
  const long long min_seqlen =
      masked ? FLASHATTN_SM90_D64_ALT_MIN_SEQLEN_MASKED : FLASHATTN_SM90_D64_ALT_MIN_SEQLEN;
  const long long max_seqlen =
      masked ? FLASHATTN_SM90_D64_ALT_MAX_SEQLEN_MASKED : FLASHATTN_SM90_D64_ALT_MAX_SEQLEN;
  return block_n != 0 && head_dim == 64 && head_dim_v == 64 && !paged && seqlen_q >= min_seqlen &&
         seqlen_k >= min_seqlen && (max_seqlen == 0 || seqlen_q < max_seqlen);
}

// d = 128, unmasked, dense, equal lengths: clusters of two CTAs with K/V multicast
// (ForwardConfig kClusterM) when the key sequence has at least
// FLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN keys (0: never) and the query blocks pair up
// (an even number per head). Host side. Measured on an H200 (2026-11-22, helper sm90L, two
// runs, docs/performance-sm90.md): L2 throughput halves (40 -> 21% of peak) and at free
// clocks the d128 non-causal rows gain +1..3% (1k-16k, both runs, against the noise
// control), but under ncu's locked clocks the kernel is 1.8-2.4% slower (the two CTAs wait
// on each other's releases: barrier stalls 9 -> 31% of samples). The gain is read as the
// power limiter's (less L2 traffic, higher SM clock: NVML read 55 MHz more on those rows,
// 27 MHz more where both columns ran the same kernel), so
// it was the default from 2048 keys. Session 25, paired timing on an H200 (three passes, control within
// +-0.2%; bench/integration/s25_sweep128.sh, s25_defaults.sh): the single-CTA kernel is now the faster one at
// every length, non-causal 2k / 4k / 8k / 16k +3.2 / +2.3 / +1.9 / +1.6% over the multicast (from 8192 keys:
// 2k / 4k alike, 8k / 16k unchanged; from 16384: 8k +1.9%), so session 25 set 0. Session 26 found that paired
// timing (every build's calls interleaved one by one) gives all builds one clock and so hides what a kernel's
// energy per call does to its own clock at the power cap, which is the multicast's gain: interleaved stints
// of sustained load (bench/sm90r_ab.py --sustained, s26_sustained.sh, three passes, control within 0.5%) read
// the multicast from 2048 keys at non-causal 2k / 4k / 16k 0.997 / 1.010 / 1.028 of the single-CTA kernel, as
// session 7's do_bench (also sustained) had. Hence 2048 again. (ForwardTest's 500 x 777 cases and
// ForwardSpreadTest's 2304-key d128 cases run it.)
#ifndef FLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN
#define FLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN 2048
#endif
inline bool use_kv_multicast(long long seqlen_k, long long m_blocks, bool masked, bool paged,
                             bool sequence_maps,
                             long long min_seqlen = FLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN) {
  return min_seqlen != 0 && seqlen_k >= min_seqlen && m_blocks % 2 == 0 && !masked && !paged &&
         !sequence_maps;
}

// K/V multicast for the d = 256 kernel (80-key blocks, shared by column chunks: ForwardConfig
// kMulticastByChunk). KV_MULTICAST_D256: unmasked problems with at least this many keys (0: never) and an
// even number of query blocks; the unmasked cluster instance has no per-consumer key ranges (every consumer's
// range is the tile's). Measured on an H200 (session 17, bench/integration/s17_d256mc.sh, from 2048 keys,
// three passes beside cuDNN and a control): 0.968-1.010 of base at 2k-16k against a control at 0.995-1.022,
// i.e. slower; hence 0 (session 27 in 400 ms stints with cuDNN interleaved, from 1024 keys, two passes:
// non-causal 1k / 2k / 4k / 8k / 16k 0.962 / 1.001 / 0.984 / 0.991 / 0.997, bench/integration/s27_mc.sh:
// still 0, unlike the causal instance below). KV_MULTICAST_D256_CAUSAL: causal (and right-window) problems
// with a multiple of four query blocks, as KV_MULTICAST_CAUSAL does at d = 128 (static couples; the masked
// cluster instance, whose lower query block may skip three 80-key blocks: kEagerSkipRelease). Same run:
// causal 2k 1.024 (control 1.028), 4k 1.022 (1.000), 8k 1.041 (0.993), 16k 1.041 (1.010) of base; ncu at 16k:
// L2 bytes 9.16 -> 4.97 GB, DRAM reads 298 -> 256.5 MB, time 1656 -> 1646 us. On an H100
// (s17_d256mc_confirm.sh, same protocol): from 2048 keys 2k 1.027 (control 0.992); from 4096 4k 1.050
// (1.001), 8k 1.062 (1.012), 16k 1.034 (0.993). Hence from 2048 keys (2k: +2.6% on the H100 against the mean
// of its three same-kernel columns, +1.0% on the H200). Session 23: from 2049 keys, where the 64-key blocks
// with placement clusters stop (D256_BLOCK64_MAX_SEQLEN_MASKED: causal 2k +3.8% over this multicast on an
// H200; not measured on an H100). Session 26: paired timing (bench/integration/s25_sweep256.sh, s26_sweep.sh;
// calls interleaved one by one, which hides the energy effect: KV_MULTICAST_MIN_SEQLEN above) read the causal
// multicast off at 4k / 8k / 16k +1.8 / +2.3 / +0.5%; interleaved stints of sustained load (s26_sustained.sh,
// three passes) read the multicast from 2049 keys at 8k 1.057-1.070 of the kernel without it, and at 4k 0.981
// of the 64-key blocks with placement clusters (D256_BLOCK64_MAX_SEQLEN_MASKED, now 4096). Hence from 4097
// keys.
#ifndef FLASHATTN_SM90_KV_MULTICAST_D256
#define FLASHATTN_SM90_KV_MULTICAST_D256 0
#endif
#ifndef FLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL
#define FLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL 4097
#endif
// Session 27: the same for the 64-key blocks (D256_BLOCK64_MAX_SEQLEN_MASKED below), which run causal d = 256
// rows up to 4096 keys on placement clusters without multicast: at least this many keys (0: never) take a
// masked cluster instance of the 64-key kernel, K/V blocks split by rows (32 of 64 per CTA, whole 1 KB
// swizzle atoms). Why: the 80-key multicast read +2.2% at causal 4k (session 17, do_bench) and +5..6% at 8k
// in stints (sessions 26 / 27), and the 64-key blocks +2..+3% at 2k / 4k over it without multicast. Measured
// on an H200 (bench/integration/s27_mc.sh, 400 ms stints with cuDNN interleaved, two passes; outputs as the
// default's): causal 2k 0.944, 4k 0.991 of the default (64-key blocks on placement clusters). Hence 0.
// Session 41 (s41_mc4k.sh, three passes): at causal 4k this instance read 0.989 and the 80-key multicast from
// 4096 keys 0.990 of the default, beside a control copy at 0.964 (400 ms stints; the spread of identical
// builds was ~3% at this row that call): no reason to move either bound.
#ifndef FLASHATTN_SM90_KV_MULTICAST_D256_BLOCK64_CAUSAL
#define FLASHATTN_SM90_KV_MULTICAST_D256_BLOCK64_CAUSAL 0
#endif

// Session 17 (measured in session 18; bench/integration/s18_d64mc.sh): K/V multicast for the d = 64
// three-consumer kernel (use_three_consumers: unmasked rows from 8192 queries, 192-row tiles, 128-key blocks
// split by rows, 64 per CTA) with at least this many keys (0: never, the default) and an even number of query
// blocks. Why: its rows are the d64 ones below the FA3 anchor (non-causal 8k 0.955 normalised on the H200,
// 8k / 16k 0.969 / 0.982 on an H100), and d64 moves twice d128's K/V bytes per FLOP through L2, where the
// d128 multicast read +1-3%. Measured on an H200 (three passes, cuDNN and a control beside; the GPU suites,
// racecheck and float64-checked CLI runs passed with it at 2048): 16k 0.990 of base (control 1.019), ncu L2
// bytes 10.86 -> 6.27 GB but time 5144 -> 5233 us; 8k is 43 query blocks of 192 rows (odd), so it never
// took the multicast. As with the unmasked d256 multicast, halving L2 traffic does not pay here: 0. (Session
// 27, 400 ms stints with cuDNN interleaved, s27_mc.sh: 16k 0.996 over two passes.)
#ifndef FLASHATTN_SM90_KV_MULTICAST_D64
#define FLASHATTN_SM90_KV_MULTICAST_D64 0
#endif

// Session 16 (issue 6, d128 causal rows): K/V multicast for causal (and right-window) problems of one length
// with at least FLASHATTN_SM90_KV_MULTICAST_CAUSAL keys (0: never) and a multiple of four 128-row query
// blocks. A cluster's two CTAs take adjacent query blocks and walk the key blocks both see (the lower block's
// consumers skip the one past its diagonal); the tiles go as static couples (tile_sections.h paired,
// tile_scheduler.h claim_next_tile): pairs of query blocks r and units - 1 - r of a head, the same key blocks
// for every r, so the clusters need no claims to stay balanced and a cluster's two CTAs never hold different
// work. Session 14 put the multicast that non-causal rows have and causal rows lacked at +1-2% (s14_mc.sh).
// Measured on an H200 (bench/integration/s16_mc.sh, three passes, cuDNN and a control beside; from 2k keys):
// causal 16k +2.2%, 8k +1.6%, 4k +0.5%, 2k -1.4% against the mean of base and control (whose spread was
// 0.3-2.7%); ncu at locked clocks 4% slower with L2 traffic halved, as on the non-causal rows (the gain is
// the power limiter's). Hence from 8k keys. Session 26: paired timing (s25_sweep256.sh, s26_sweep.sh) read it
// off at causal 8k / 16k +4.4 / +4.0%, but paired timing hides the energy effect (KV_MULTICAST_MIN_SEQLEN
// above); interleaved stints of sustained load (s26_sustained.sh, three passes) read it on at 1.015 / 1.027
// of off (control 0.985 / 1.017: within that run's noise, the direction the grid's also took). Stays 8192.
#ifndef FLASHATTN_SM90_KV_MULTICAST_CAUSAL
#define FLASHATTN_SM90_KV_MULTICAST_CAUSAL 8192
#endif
inline bool use_kv_multicast_causal(long long seqlen_k, long long m_blocks, int window_left, int window_right,
                                    bool paged, bool sequence_maps,
                                    long long min_seqlen = FLASHATTN_SM90_KV_MULTICAST_CAUSAL) {
  return min_seqlen != 0 && seqlen_k >= min_seqlen && m_blocks % 4 == 0 && window_left < 0 &&
         window_right >= 0 && !paged && !sequence_maps;
}

// PLACEMENT_MAX_SEQLEN above, for a kernel of one CTA per tile: causal (or right-window) problems of one
// length (couples_shape) at d = dv = 256 with at most max_seqlen keys and whole couples of query blocks. Host
// side.
inline bool use_placement_clusters(int head_dim, int head_dim_v, long long seqlen_k, long long m_blocks,
                                   bool couples_shape,
                                   long long max_seqlen = FLASHATTN_SM90_PLACEMENT_MAX_SEQLEN) {
  return max_seqlen != 0 && couples_shape && head_dim == 256 && head_dim_v == 256 && seqlen_k <= max_seqlen &&
         m_blocks % 2 == 0;
}

// HEAD_MAJOR_MAX_SEQLEN above: sections of one head, for calls that run the static schedule (the caller
// checks that); HEAD_MAJOR_MASKED_MAX_SEQLEN for those that run the dynamic one. Host side.
inline bool head_major_order(long long seqlen_k, bool dynamic_schedule = false) {
  const long long max_seqlen =
      dynamic_schedule ? FLASHATTN_SM90_HEAD_MAJOR_MASKED_MAX_SEQLEN : FLASHATTN_SM90_HEAD_MAJOR_MAX_SEQLEN;
  return max_seqlen != 0 && (max_seqlen < 0 || seqlen_k <= max_seqlen);
}

// d = 128 (dense K/V): a key block of FLASHATTN_SM90_LONG_KEY_BLOCK_N keys instead of
// 128 when the key sequence is long. Every per-block cost that does not scale with the
// block's width (the turn barrier, the K/V full/empty waits and arrives, the wgmma
// issue-to-wait latency, the row maxima's shuffles) is then spread over more tensor
// work. At short lengths the wider block wastes more keys past the end (512 keys are
// 3.2 blocks of 160). Measured on an H200 (2026-11-22, sm90d, two runs): 160 keys -13%
// at 512, -3.5% .. +3% (noise) at 2k-16k; 176 and 192 slower than 160 on every row.
// So off by default (FLASHATTN_SM90_LONG_KEY_BLOCK_N 0). Host side; seqlen_k is the
// longest sequence's.
inline bool use_long_key_blocks(int head_dim, int head_dim_v, long long seqlen_k, bool masked, bool paged) {
  const long long min_seqlen =
      masked ? FLASHATTN_SM90_LONG_KEY_MIN_SEQLEN_MASKED : FLASHATTN_SM90_LONG_KEY_MIN_SEQLEN;
  return FLASHATTN_SM90_LONG_KEY_BLOCK_N != 0 && head_dim == 128 && head_dim_v == 128 && !paged &&
         seqlen_k >= min_seqlen;
}

// Decoding: one consumer warpgroup and 64-row tiles (ForwardConfig kSingleConsumer) where every tile of the
// 128-row kernel would be at least half padding: at most 64 query rows per head, or per group of packed GQA
// heads (q length 1 over 4 heads of a group: 4 rows). The 128-row kernel computes both GEMMs for all 128 rows
// of a tile, 128 FLOP per byte of K/V at d = 128 (~510 TFLOP/s at the H200's 3.97 TB/s decode rate); 64 rows
// halve it, and a single consumer, idle tensor cores during its softmax aside, suits a memory-bound loop.
// Measured (session 19, same-process A/Bs beside cuDNN and an identical control, bench/decode_ab.py): H100
// 1.000-1.004 of the 128-row kernel on five shapes over seven passes (control 0.999-1.001; the H100 decodes
// at 90% of its DRAM peak either way); H200 (bench/integration/s19_last.sh) b64 8k 1.012, b16 32k 1.009, MHA
// b16 4k 1.023, b64 8k in pages of 256 0.994 (controls 0.999-1.003), against +6-10% predicted: the tensor
// work is not what holds the H200's decode at 0.90 of cuDNN (ncu: 81.9% of the DRAM peak against cuDNN's
// 95.4%). Three K/V stages (a switch removed after its measurement: 0.996-1.003 on the H100, 0.997-1.001 of
// two on the H200) and a heads-major cache (+1.1%) do not close it either. Session 20 found the cause: the
// tensor maps' 256B L2 promotion capped the TMA stream (tensor_map.cu; with 128B the decode reads 0.98-0.996
// of cuDNN on the H200). The same kernel as two CTAs per SM (64-key blocks, setmaxnreg 24 / 232; session 20,
// bench/integration/s20_decode2.sh, removed) read 0.98-0.99 of one. Kept for its small gain on the H200, and
// since session 45 for split-KV (split_kv.h), which only this kernel has: a decode of few tiles splits its
// keys over the SMs there. d = dv = 128 until session 46; then d = dv = 64 and 256 too
// (SINGLE_CONSUMER_OTHER_DIMS), whose decodes of few tiles had run on cuda_sm80's splits (d = 96 runs the d =
// 128 kernel through its own dispatch). Measured (session 46, bench/integration/s46_dims.sh, graphed KV-cache
// decode steps against the tree without them, three interleaved rounds): d = 256 (16 / 8 heads) 0.53-0.98 of
// the time at batch 1-8 over 1024-16384 keys, 0.99 at batch 64; d = 64 (32 / 8 heads) 0.52-0.96, 0.88 at
// batch 64; flash_attn_func with 16 queries of groups of 4 (64 packed rows) at batch 16: 0.98 / 0.92. d = 96
// runs the d = 128 decode kernel (bench/integration/s46_d96.sh, MHA 32 heads): 0.42-0.96 at batch 1-8, 0.90
// at batch 64 (the 128-row kernel had computed 128 rows for each head's one query).
// FLASHATTN_SM90_SINGLE_CONSUMER 0 turns it off (a measurement setting). Host side; seqlen_q is the longest
// sequence's, pack the packing factor of GQA at 64-row tiles (forward_launch.h pack_factor).
#ifndef FLASHATTN_SM90_SINGLE_CONSUMER
#define FLASHATTN_SM90_SINGLE_CONSUMER 1
#endif
#ifndef FLASHATTN_SM90_SINGLE_CONSUMER_OTHER_DIMS
#define FLASHATTN_SM90_SINGLE_CONSUMER_OTHER_DIMS 1
#endif
// The kernel head dims (d, dv) with a one-consumer decode kernel (padded head dims: kernel_head_dims below).
constexpr bool single_consumer_head_dims(int head_dim, int head_dim_v) {
  return FLASHATTN_SM90_SINGLE_CONSUMER != 0 && head_dim == head_dim_v &&
         (head_dim == 128 ||
          (FLASHATTN_SM90_SINGLE_CONSUMER_OTHER_DIMS != 0 && (head_dim == 64 || head_dim == 256)));
}
// The head dim of the kernel that runs head dim d: the smallest of 64, 128, 192, 256 that holds it (a padded
// head dim, kernel_head_dims below), d itself past 256 (dv = 512).
constexpr int kernel_head_dim(int head_dim) {
  return head_dim <= 64    ? 64
         : head_dim <= 128 ? 128
         : head_dim <= 192 ? 192
         : head_dim <= 256 ? 256
                           : head_dim;
}
// Padded head dims: a problem of head dims (d, dv) without a kernel of its own runs the kernel of d = dv =
// kernel_head_dim(max(d, dv)). Its tensor maps describe d and dv columns, so TMA zero-fills Q's, K's and V's
// columns past them (S is exact: the extra columns add 0 to every score; O's extra columns are 0) and clips
// them from the O store (as d = 96 has since session 5, which has no kernel of its own; its units were folded
// into d = 128's in session 69); the paged producer's row gather zero-fills them too (producer.h
// gather_paged_block), and the decode kernels' direct row stores skip them (decode_consumer.h
// PieceSum::store_row). The GEMMs do the kernel's work (kernel_head_dim / max(d, dv) times the problem's
// at d = dv; less where narrowed_gemm_dim below narrows them), and still run 1.5-3.3x cuda_sm80's kernels of
// its own head-dim buckets at every multiple of 8 measured, d = 8 (on the d = 64 kernel) included,
// and 1.0-1.27x cuDNN's (bench/integration/s69_padded.sh; docs/performance.md, session 69). Needs d and dv
// multiples of 8 (the 16-byte units of the gather and of TMA's strides).
struct KernelHeadDims {
  int d = 0, dv = 0;  // both 0: no kernel runs (d, dv)
};
constexpr KernelHeadDims kernel_head_dims(long long d, long long dv) {
  if ((d == 192 && dv == 128) || (d == 64 && (dv == 256 || dv == 512)))
    return {static_cast<int>(d), static_cast<int>(dv)};
  const long long widest = d > dv ? d : dv;
  if (d % 8 != 0 || dv % 8 != 0 || d <= 0 || dv <= 0 || widest > 256) return {};
  const int kernel = kernel_head_dim(static_cast<int>(widest));
  return {kernel, kernel};
}
// Narrowed GEMMs (session 71): a problem whose head dims are at most 96 (72, 80, 88, 96 and pairs of these)
// runs d = 128's two-consumer kernels with GEMMs over 96 columns, one whose head dims are at most 160
// (136-160) d = 192's with GEMMs over 160 (ForwardConfig kGemmDim_; the units forward_hdim96_*.cu,
// forward_hdim160_*.cu): 3/4 and 5/6 of the padded tensor work, where the build has them. Their decode and
// dropout calls run the kernel's own instances (memory-bound, and rare). The narrowed width: 0 where none
// applies. FLASHATTN_SM90_NARROWED_GEMMS 0: every problem on its kernel's full width (a measurement setting).
#ifndef FLASHATTN_SM90_NARROWED_GEMMS
#define FLASHATTN_SM90_NARROWED_GEMMS 1
#endif
constexpr int narrowed_gemm_dim(long long d, long long dv) {
  const KernelHeadDims kernel = kernel_head_dims(d, dv);
  if (FLASHATTN_SM90_NARROWED_GEMMS == 0 || kernel.d != kernel.dv) return 0;
  if (kernel.d == 128 && d <= 96 && dv <= 96) return 96;
  if (kernel.d == 192 && d <= 160 && dv <= 160) return 160;
  return 0;
}
inline bool use_single_consumer(int head_dim, int head_dim_v, long long seqlen_q, int pack) {
  return single_consumer_head_dims(head_dim, head_dim_v) && seqlen_q * pack <= 64;
}
// The decode kernel's narrow tile (ForwardConfig kNarrowRows, decode_consumer.h) for at most kNarrowRowsMax
// packed query rows per tile (a decode step of up to 8 query heads per kv head; with fewer, or two
// speculative queries of 4): the 64-row tile computes 64 rows of S and of the softmax for them, the narrow
// one 8 columns of S^T. d = dv = 64, 128 (d = 96 runs d = 128's) and 256 (on 64-key blocks where the 64-row
// tile has 80: ForwardConfig kNarrowRows). FLASHATTN_SM90_NARROW_DECODE 0 turns it off (a measurement
// setting); 1 leaves d = 256 on the 64-row tile (the tree before session 48, to measure against).
#ifndef FLASHATTN_SM90_NARROW_DECODE
#define FLASHATTN_SM90_NARROW_DECODE 2
#endif
// Session 48: NARROW_COMBINE, the narrow tile's combine of a split tile (decode_consumer.h
// combine_narrow_pieces: float4 units of the rows in registers, 16 loads in flight a thread, a round's
// weights independent of each other, O written to its buffer directly). 0: split_kv.h's combine in the 64-row
// tile's layout, where warp 0 alone holds the rows and takes four pieces per L2 round trip at dv = 128, two
// at 256 (s48_trace.sh: 0.5-0.7 us a round after ~1 us for the first, 5.0 us of a 19 us d256 call of 16
// pieces). Session 48 took rows of at most 512 values (one unit a thread, 16 pieces a round): 0.81-0.99 of 0
// on tiles of 2-4 rows (s48_combine2.sh); its forms for more rows kept a dependent chain of exp2f across the
// pieces and read 1.02-1.27. Session 52 (sum_pieces): 2 units a thread at 8 rows of dv 128 (8 pieces a
// round), up to 4 at dv 256, the weights still independent (measured in s52_combine.sh).
#ifndef FLASHATTN_SM90_NARROW_COMBINE
#define FLASHATTN_SM90_NARROW_COMBINE 1
#endif
constexpr bool narrow_rows_head_dims(int head_dim, int head_dim_v) {
  return FLASHATTN_SM90_NARROW_DECODE != 0 && single_consumer_head_dims(head_dim, head_dim_v) &&
         (head_dim <= 128 || FLASHATTN_SM90_NARROW_DECODE >= 2);
}
inline bool use_narrow_rows(int head_dim, int head_dim_v, long long seqlen_q, int pack) {
  return narrow_rows_head_dims(head_dim, head_dim_v) && seqlen_q * pack <= kNarrowRowsMax;
}

// (d = 128 with 64-key blocks for short problems, session 19, was measured and removed: the first consumer
// then skips the causal diagonal's upper 64 keys, 10% less tensor work at causal 512, with four stages of
// K/V. H100, three passes beside cuDNN and an identical control (bench/integration/s19_first.sh): causal 512
// / 1k 0.965 / 0.964 of base, non-causal 512 / 1k 0.944 / 0.959 (control 1.000-1.005); session 9's first form
// read 0.84-0.89. A loop iteration costs ~354 static instructions whatever its width (834 at 64 keys, 1314 at
// 128), so two 64-key iterations issue 27% more instructions per key, more than the work saved.)

// d = 256: 64-key blocks instead of 80 (ForwardConfig kD256Block64; helper sm90k, session 8). 80 keys
// cover 512 keys in 7 blocks (560 keys of S and P V, 9% thrown away; 1.6% at 1k and 2k), 64 divide
// every power of two; paged K/V with pages of a multiple of 32 rows gets TMA boxes of 32..64 rows
// instead of 16 (forward_launch.h paged_box_rows: the largest power of two dividing both the page
// and the block). 64 keys pay 25% more per-block costs (turn barriers, waits, row maxima and sums).
// Measured on an H200 (2026-11-22, bf16, cuDNN and a control in the same process, two runs of two
// passes; docs/performance-sm90.md "Session 8, helper sm90k"): 64 keys against 80 +4.4% / +5.4% at 256
// keys (non-causal / causal), +0.8% / +4.5% at 384, +0.7..0.9% / +2.2..2.6% at 512 (controls within
// 0.6%), none shown at 640 / 768, 0.99-1.00 at 1k, 0.94-0.97 from 2k on; paged fp16 (8192 keys b1 h4,
// 4096 keys b4 h16) pages of 64/128/256 0.77-0.80x of the 80-key time, 32 0.81-0.85x, pages of 16 / 48
// (16-row boxes either way) 0.94-1.03x. Session 17, on an H100 (bench/integration/s17_l2_short.sh, three
// passes beside cuDNN and a control): causal 1k 64-key / 80-key 1.037 (control 1.017), under ncu 171.9 ->
// 167.1 us with the SM's L2 reads 707 -> 671 MB (cuDNN's: 671 MB); on an H200 (s17_b64_confirm.sh) 1.025
// (control 1.011); hence the masked bound 1024. Session 23, on an H200 (bench/integration/s23_short.sh, three
// passes beside cuDNN and a control, by-sum softmax since session 23): causal 2k with 64-key blocks and the
// placement clusters (no K/V multicast) 1.038 of the default (80-key blocks with multicast; every pass,
// control 0.985), the placement clusters alone with 80-key blocks 1.009; hence the masked bound 2048 (and
// PLACEMENT_MAX_SEQLEN, KV_MULTICAST_D256_CAUSAL with it). Unmasked 1k with 64 keys 0.997: the unmasked bound
// stays 512. Session 26, paired timing on an H200 (s25_sweep256.sh, three passes): the masked bound 4096 with
// the placement clusters to 4096 reads causal 4k +3.2% over the 80-key multicast kernel, +1.4% over the
// 80-key kernel without it (s26_sweep.sh: +2.9% over the old default); to 8192, 8k 0.994 of the 80-key kernel
// without multicast; unmasked 1k with 64 keys 0.977 (still 512). Under sustained load (s26_sustained.sh)
// causal 4k 1.02 of the 80-key multicast kernel. Hence the masked bound 4096. In all: dense K/V up to
// FLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN keys (unmasked) / _MASKED (causal or windowed; 0 = never), and paged
// K/V whose pages are a multiple of 32 rows when FLASHATTN_SM90_D256_BLOCK64_PAGED is 1 (0 = never; 2 = every
// page size, a measurement setting). Host side; seqlen_k is the longest sequence's. Macros so that an A/B
// build can move them (bench/sm90k_run1.sh, bench/sm90k_run2.sh).
#ifndef FLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN
#define FLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN 512
#endif
#ifndef FLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED
#define FLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED 4096
#endif
#ifndef FLASHATTN_SM90_D256_BLOCK64_PAGED
#define FLASHATTN_SM90_D256_BLOCK64_PAGED 1
#endif
#define FLASHATTN_SM90_D256_BLOCK64                                                                     \
  (FLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN != 0 || FLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED != 0 || \
   FLASHATTN_SM90_D256_BLOCK64_PAGED != 0)
// page_size: 0 for dense K/V.
inline bool use_d256_block64(int head_dim, int head_dim_v, long long seqlen_k, bool masked,
                             long long page_size) {
  if (head_dim != 256 || head_dim_v != 256) return false;
  if (page_size > 0 && (FLASHATTN_SM90_D256_BLOCK64_PAGED >= 2 ||
                        (FLASHATTN_SM90_D256_BLOCK64_PAGED == 1 && page_size % 32 == 0))) {
    return true;
  }
  const long long max_seqlen =
      masked ? FLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED : FLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN;
  return seqlen_k <= max_seqlen;
}

}  // namespace flashattn::detail::cuda_sm90
