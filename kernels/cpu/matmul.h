// Matrix products of quantised weights with float activations, on the CPU.
//
// A weight matrix has `rows` output features; each row holds `cols` values in
// GGML's block format `type` (for Q4_K, cols/256 blocks of 144 bytes). The
// activations are quantised once per call to int8 with one scale per 32 values
// and sums per 16 (for the formats' minimums and zero points) — for every weight
// type, the K-quants included: finer than ggml's Q8_K, and one product kernel per
// ISA instead of one per format (see quant_blocks.h). Each thread then takes a
// range of 4-row weight tiles, unpacks each tile once and multiplies it with every
// token in 4x4 register tiles, so a weight row is read from memory once per call
// however many tokens there are. On AVX-512 VNNI two or more tokens use 16-row
// panels instead (gemm_panel_avx512.cpp), and one token of Q4_0/Q4_1/Q5_0/Q8_0
// reads the blocks directly (no unpack). Q4_0/Q4_1/Q8_0 weights repacked into
// the lanes layout (repackForDecode, as the CPU backend loads them there) take
// one token and decode steps of up to 16 (matmulDecode, gemv_lanes_avx512.cpp,
// or gemv_lanes_avx2.cpp on AVX2 machines);
// in GGML's layout, with VBMI, decode steps of 2-5 tokens take
// gemv_avx512vbmi.cpp; either computes each token as if alone.
//
// Dispatch: AVX-512 VNNI, AVX2+FMA or scalar, chosen once at start-up from
// cpuid (KESTREL_CPU_ISA=scalar|avx2|avx512 forces a path, for tests).
#pragma once

#include "ggml_types.h"
#include "thread_pool.h"

#include <cstddef>
#include <cstdint>
#include <span>

namespace kestrel::kernels {

struct WeightMatrix {
    GgmlType type = GgmlType::F32;
    const void* data = nullptr;  // rows * rowBytes bytes
    int64_t rows = 0;
    int64_t cols = 0;
    size_t rowBytes = 0;
    // The rows are in the lanes layout (repackForDecode), not GGML's blocks;
    // every function here takes either.
    bool lanes = false;
};

// Whether this CPU multiplies weights of `type` faster repacked into the lanes
// layout (kernels/cpu/lanes_layout.h: Q4_0, Q4_1, Q8_0 and Q4_K on AVX-512 VNNI
// and on AVX2, Q5_0 on AVX-512; off with KESTREL_CPU_LANES=0). The backend
// repacks such weights once at load.
bool lanesLayoutAvailable(GgmlType type);
// Bytes the repacked matrix needs, and the repacking itself: `dst` (64-byte
// aligned, lanesLayoutBytes(w) bytes) gets w's rows in the lanes layout; the
// returned matrix describes them.
size_t lanesLayoutBytes(const WeightMatrix& w);
WeightMatrix repackForDecode(const WeightMatrix& w, void* dst, ThreadPool& pool);

// Row `row` of w as floats (w.cols values), whatever its layout.
void weightRowToFloat(const WeightMatrix& w, int64_t row, float* out);

// y[t * rows + r] = sum_c W[r][c] * x[t * cols + c]  for t < tokens.
// Preconditions (checked by the caller at load): cols is a whole number of blocks
// and the type has computeSupported. x and y must not overlap. Thread-safety:
// uses `pool` (one call at a time per pool); scratch is per thread.
void matmul(const WeightMatrix& w, const float* x, int64_t tokens, float* y, ThreadPool& pool);

// The same product for the rows of a decode step: each token is the next token
// of a different sequence. Up to matmulExactBatchTokens(w.type) tokens, every
// token's outputs are bit for bit those of a one-token call with that token
// alone, so a sequence decodes the same whatever else shares its step (the
// lanes GEMV gives this for up to 16 tokens on AVX-512 VNNI and AVX2, the VBMI GEMV for
// 2-5 tokens of GGML-layout weights; both faster than the panels there).
// Past that count, and for prefill rows (matmul), a row's result still does not
// depend on the other rows of the call, but it rounds differently from a
// one-token call.
void matmulDecode(const WeightMatrix& w, const float* x, int64_t tokens, float* y, ThreadPool& pool);

// Several decode products of the same activations (Q, K and V; gate and up),
// y of each as matmulDecode would write it, bit for bit. Where all weights are
// in the lanes layout, x is quantised once and one parallel loop covers every
// product's rows (one wait for the threads instead of one per product).
struct SharedProduct {
    const WeightMatrix* w;
    float* y;
};
constexpr size_t kMaxSharedProducts = 8;  // more products than this run one matmulDecode each
void matmulDecodeShared(std::span<const SharedProduct> products, const float* x, int64_t tokens, ThreadPool& pool);

// The same product without int8 activations: each weight tile is dequantised
// to float and multiplied with the float activations (FMA). A few times slower
// than matmul(); it computes the model as defined, for accuracy checks (64
// greedy tokens against a float reference) and users who want exact maths.
void matmulFloatActivations(const WeightMatrix& w, const float* x, int64_t tokens, float* y, ThreadPool& pool);

// The same product computed the slow, obvious way in double precision after
// dequantising: the reference the fast paths are tested against.
void matmulReference(const WeightMatrix& w, const float* x, int64_t tokens, float* y);

// Dequantise `n` values (a whole number of blocks) of one row.
void dequantizeRow(GgmlType type, const void* src, float* dst, int64_t n);

// Quantise `n` floats into `type` blocks (round-to-nearest as ggml's reference
// quantisers do). Used by tests and `kestrel-cli synth`. Returns false for a
// type without a quantiser.
bool quantizeRow(GgmlType type, const float* src, void* dst, int64_t n);

// The most tokens a matmulDecode call may have for which every token's outputs
// are bit for bit those of a one-token call with that token alone, for weights
// of `type` on the active path (1 when batches round differently; INT64_MAX
// when every count does). Batched decoding is exact up to this many sequences
// per step.
int64_t matmulExactBatchTokens(GgmlType type);

// The instruction set the dispatcher picked: "avx512vnni", "avx2" or "scalar".
const char* activeIsa();

// Explicit paths, for tests and benchmarks: every path must agree with
// matmulReference. matmulWithIsa falls back to the active path (and returns
// false) when this CPU or build lacks the one asked for.
enum class CpuIsa { Scalar, Avx2, Avx512Vnni };
bool isaSupported(CpuIsa isa);
bool matmulWithIsa(CpuIsa isa, const WeightMatrix& w, const float* x, int64_t tokens, float* y, ThreadPool& pool,
                   bool decodeRows = false);

}  // namespace kestrel::kernels
