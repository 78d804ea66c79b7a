// Launchers of the matrix-vector kernels (decode is one GEMV per weight).
//
// Weights live on the device in a layout made for these kernels (see
// engine/backend/cuda/cuda_weights.cpp, which repacks GGUF blocks into it):
//   Q4_0: qs = 16 bytes per 32-block (GGML nibble order), row-major blocks;
//         scales = one half per block, in a separate array (so each lane's
//         quants are one 16-byte load and the warp's loads are contiguous).
//   Q4_1: as Q4_0, scales = half2 (d, m) per block.
//   Q8_0: qs = 32 int8 per block; scales = one half per block.
//   Q8_16: qs = 32 int8 per block; scales = 4 halves per block: the scale of
//         values 0-15, of values 16-31, a min added to every value, 0.
//         (Q5_1, Q5_K and Q6_K are repacked into it; Q4_K into Q4_1, Q5_0
//         into Q8_0: engine/backend/cuda/cuda_repack.h.)
//   F16:  qs = rows x cols halves; scales unused.
// Integer formats multiply with activations quantised to int8 per 32 values
// (Q8Act; see launchQuantizeQ8) through dp4a; F16 multiplies float activations.
//
// All launchers are asynchronous on `stream` and may be captured into a graph.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kestrel::cuda {

enum class DevFormat : int32_t { Q4_0, Q4_1, Q8_0, F16, Q8_16 };

struct DevMatrix {
    DevFormat format = DevFormat::F16;
    const void* qs = nullptr;
    const void* scales = nullptr;
    int64_t rows = 0;
    int64_t cols = 0;
};

// Activations quantised per 32 values: q[t * cols + c]; meta[t * cols/32 + b] =
// (scale d, d * sum of the block's 32 quants).
struct Q8Act {
    const int8_t* q = nullptr;
    const float2* meta = nullptr;
};

// x: [tokens, cols] float -> q [tokens, cols] int8, meta [tokens, cols/32]. cols % 32 == 0.
void launchQuantizeQ8(const float* x, int64_t tokens, int64_t cols, int8_t* q, float2* meta, cudaStream_t stream);

struct GemvJob {
    DevMatrix w;
    float* y = nullptr;         // [tokens, w.rows]
    float* residual = nullptr;  // also residual += W x: the residual add folded in (only where gemvFoldFits)
};

// The int8 activations a GEMV makes itself from y = rmsnorm(x) * gamma instead
// of reading them: the rmsnorm kernel before it folded in (gemv_act.cuh's
// NormIn says why; only where gemvFoldFits). The kernel's first block also
// writes what the norm kernel would have: y and its int8 form (q8, meta).
struct NormQ8 {
    const float* x = nullptr;
    const float* gamma = nullptr;
    float eps = 0.0f;
    float* y = nullptr;
    int8_t* q8 = nullptr;
    float2* meta = nullptr;
};

// Whether a product with w at `tokens` takes GemvJob::residual and, with
// `norm`, NormQ8: one token of an integer format on the warp-per-row kernels
// (rows under 4096 values; the split-row ones only with KESTREL_CUDA_FOLD=2,
// measured slower), rows of at most 8192 values for NormQ8. KESTREL_CUDA_FOLD=0
// says no (to compare).
bool gemvFoldFits(const DevMatrix& w, int64_t tokens, bool norm);

// Up to 3 products sharing one input (Q, K and V; or any weights of equal
// cols and format) in one launch: y_j[t] = W_j x[t]. Integer formats read xq,
// F16 reads x.
void launchGemv(const GemvJob* jobs, int count, const float* x, Q8Act xq, int64_t tokens, cudaStream_t stream);

enum class GluAct : int32_t { Silu, GeluTanh };

// Gate and up in one pass: gateOut = Wg x, upOut = Wu x, out = act(gate) * up
// (out may be gateOut or upOut). With q8, also out's int8 form (as launchQuantizeQ8
// writes it); gateOut and upOut may then be left unwritten.
void launchGemvGlu(const DevMatrix& gate, const DevMatrix& up, const float* x, Q8Act xq, int64_t tokens,
                   float* gateOut, float* upOut, float* out, GluAct act, cudaStream_t stream, int8_t* q8,
                   float2* q8meta);

// launchGemvGlu for one token on rmsnorm(src.x) * src.gamma (gemvFoldFits(gate, 1, true)).
void launchGemvGluNorm(const DevMatrix& gate, const DevMatrix& up, NormQ8 src, float* gateOut, float* upOut, float* out,
                       GluAct act, cudaStream_t stream, int8_t* q8, float2* q8meta);

// out[t] = row ids[t] of the table, dequantised. out is [tokens, cols].
void launchEmbed(const DevMatrix& table, const int32_t* ids, int64_t tokens, float* out, cudaStream_t stream);

}  // namespace kestrel::cuda
