// Tensor-core products for several tokens (see gemm_mma.cuh).
//
// A block computes one tile of 16 weight rows x (8 NT8) tokens. Its 8 warps
// split the row's 32-blocks (warp w takes blocks w, w + 8, ...), each keeping
// the whole tile's partial sums in registers; the 8 partials are summed through
// shared memory at the end. Split-K gives a 4096-row matrix 2048 warps instead
// of 256. Still too few bytes in flight for a weight stream (4-byte loads, two
// blocks per warp at a time): 16 tokens run far from one weight pass, see
// docs/PERFORMANCE.md; 16-byte loads through shared memory are the next step.
//
// Fragments of mma.m16n8k32.s8 (lane = 4 g + t): A holds rows g and g + 8,
// k = 4t..4t+3 and 16+4t..16+4t+3; B holds token g, the same k; C holds rows g,
// g + 8 and tokens 2t, 2t + 1 of the 8-token tile.
#include "cuda_common.cuh"
#include "gemm_jobs.cuh"
#include "gemm_mma.cuh"
#include "gemm_tiled.cuh"
#include "mma_ptx.cuh"

#include <cstdlib>

namespace kestrel::cuda {
namespace {

constexpr int kRowsPerTile = 16;
constexpr int kSplitWarps = 8;


__device__ __forceinline__ uint32_t ldg32(const void* p) { return __ldg(static_cast<const unsigned int*>(p)); }

// The A fragment of block b for rows ra (g) and rb (g + 8), and their scales.
template <DevFormat F>
__device__ __forceinline__ void loadA(const DevMatrix& w, int64_t ra, int64_t rb, int64_t nb, int64_t b, int t,
                                      uint32_t (&a)[4], float2& sa, float2& sb) {
    const auto* qs = static_cast<const uint8_t*>(w.qs);
    if constexpr (F == DevFormat::Q8_0 || F == DevFormat::Q8_16) {
        const uint8_t* pa = qs + (ra * nb + b) * 32 + 4 * t;
        const uint8_t* pb = qs + (rb * nb + b) * 32 + 4 * t;
        a[0] = ldg32(pa);
        a[1] = ldg32(pb);
        a[2] = ldg32(pa + 16);
        a[3] = ldg32(pb + 16);
    } else {
        const uint32_t wa = ldg32(qs + (ra * nb + b) * 16 + 4 * t);
        const uint32_t wb = ldg32(qs + (rb * nb + b) * 16 + 4 * t);
        a[0] = wa & 0x0f0f0f0fu;
        a[1] = wb & 0x0f0f0f0fu;
        a[2] = (wa >> 4) & 0x0f0f0f0fu;
        a[3] = (wb >> 4) & 0x0f0f0f0fu;
    }
    if constexpr (F == DevFormat::Q4_1) {
        const auto* s = static_cast<const __half2*>(w.scales);
        sa = __half22float2(s[ra * nb + b]);
        sb = __half22float2(s[rb * nb + b]);
    } else if constexpr (F == DevFormat::Q8_16) {  // (d of values 0-15, d of 16-31); the mins: minOf
        const auto* s = static_cast<const __half2*>(w.scales);
        sa = __half22float2(s[(ra * nb + b) * 2]);
        sb = __half22float2(s[(rb * nb + b) * 2]);
    } else {
        const auto* s = static_cast<const __half*>(w.scales);
        sa = make_float2(__half2float(s[ra * nb + b]), 0.0f);
        sb = make_float2(__half2float(s[rb * nb + b]), 0.0f);
    }
}

// One block's int32 dot, scaled: the row's scale (d, and m for Q4_1) with the
// token's (d, d * sum of its quants).
template <DevFormat F>
__device__ __forceinline__ float scaled(int dot, float2 ws, float2 am) {
    if constexpr (F == DevFormat::Q4_0) return ws.x * (am.x * static_cast<float>(dot) - 8.0f * am.y);
    else if constexpr (F == DevFormat::Q4_1) return ws.x * am.x * static_cast<float>(dot) + ws.y * am.y;
    else return ws.x * am.x * static_cast<float>(dot);
}

// Q8_16's min of block b of row r.
__device__ __forceinline__ float minOf(const DevMatrix& w, int64_t r, int64_t nb, int64_t b) {
    return __low2float(static_cast<const __half2*>(w.scales)[(r * nb + b) * 2 + 1]);
}

template <DevFormat F, int NT8>
__global__ void __launch_bounds__(kSplitWarps * 32) gemmMmaKernel(TiledJobs jobs, Q8Act xq, int64_t tokens) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    unsigned tile = blockIdx.x;
    const GemvJob& job = jobOfTile(jobs, tile);
    const DevMatrix& w = job.w;
    const int64_t rows = w.rows, cols = w.cols, nb = cols / 32;
    const int64_t r0 = static_cast<int64_t>(tile) * kRowsPerTile;
    // Rows and tokens past the end load the last valid one and are not stored.
    const int64_t ra = r0 + g < rows ? r0 + g : rows - 1;
    const int64_t rb = r0 + g + 8 < rows ? r0 + g + 8 : rows - 1;
    const int64_t t0 = static_cast<int64_t>(blockIdx.y) * 8 * NT8;
    auto tokenAt = [&](int64_t n) { return t0 + n < tokens ? t0 + n : tokens - 1; };
    pdlTrigger();
    pdlWait();

    float acc[NT8][4];
#pragma unroll
    for (int n = 0; n < NT8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;

    // Two blocks per iteration keep twice the loads in flight; wide tiles already hold
    // 8 x NT8 loads per block (and unrolling them would cost occupancy).
#pragma unroll(NT8 <= 2 ? 2 : 1)
    for (int64_t b = warp; b < nb; b += kSplitWarps) {
        uint32_t a[4];
        float2 sa, sb;
        loadA<F>(w, ra, rb, nb, b, t, a, sa, sb);
        // Q8_16 scales the two halves of a block apart: one mma per half (the other half zero).
        float minA = 0.0f, minB = 0.0f;
        if constexpr (F == DevFormat::Q8_16) {
            minA = minOf(w, ra, nb, b);
            minB = minOf(w, rb, nb, b);
        }
#pragma unroll
        for (int n = 0; n < NT8; ++n) {
            const int8_t* xb = xq.q + tokenAt(8 * n + g) * cols + b * 32 + 4 * t;
            const uint32_t b0 = ldg32(xb), b1 = ldg32(xb + 16);
            const float2 m0 = xq.meta[tokenAt(8 * n + 2 * t) * nb + b];
            const float2 m1 = xq.meta[tokenAt(8 * n + 2 * t + 1) * nb + b];
            if constexpr (F == DevFormat::Q8_16) {
                const uint32_t lo[4] = {a[0], a[1], 0u, 0u}, hi[4] = {0u, 0u, a[2], a[3]};
                int cl[4] = {0, 0, 0, 0}, ch[4] = {0, 0, 0, 0};
                mma16832(cl, lo, b0, b1);
                mma16832(ch, hi, b0, b1);
                acc[n][0] += m0.x * (sa.x * static_cast<float>(cl[0]) + sa.y * static_cast<float>(ch[0])) + minA * m0.y;
                acc[n][1] += m1.x * (sa.x * static_cast<float>(cl[1]) + sa.y * static_cast<float>(ch[1])) + minA * m1.y;
                acc[n][2] += m0.x * (sb.x * static_cast<float>(cl[2]) + sb.y * static_cast<float>(ch[2])) + minB * m0.y;
                acc[n][3] += m1.x * (sb.x * static_cast<float>(cl[3]) + sb.y * static_cast<float>(ch[3])) + minB * m1.y;
            } else {
                int c[4] = {0, 0, 0, 0};
                mma16832(c, a, b0, b1);
                acc[n][0] += scaled<F>(c[0], sa, m0);
                acc[n][1] += scaled<F>(c[1], sa, m1);
                acc[n][2] += scaled<F>(c[2], sb, m0);
                acc[n][3] += scaled<F>(c[3], sb, m1);
            }
        }
    }

    // Sum the split-K partials: red[warp][n * 4 + e][lane], lanes consecutive.
    __shared__ float red[kSplitWarps][NT8 * 4][32];
#pragma unroll
    for (int n = 0; n < NT8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) red[warp][n * 4 + e][lane] = acc[n][e];
    __syncthreads();
    for (int i = threadIdx.x; i < NT8 * 4 * 32; i += kSplitWarps * 32) {
        const int ne = i / 32, l = i % 32, n = ne / 4, e = ne % 4;
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < kSplitWarps; ++k) s += red[k][ne][l];
        const int64_t row = r0 + (l >> 2) + (e >= 2 ? 8 : 0);
        const int64_t tok = t0 + 8 * n + 2 * (l & 3) + (e & 1);
        if (row < rows && tok < tokens) job.y[tok * rows + row] = s;
    }
}

// Measured on an H200 (llama3-8b shape, --streams): 2 and 4 streams decode faster with the dp4a
// GEMV (532 / 592 tok/s against 343 / 520), 16 streams and a 512-token prefill faster here
// (675 against 512 tok/s; 2684 against 1444 tok/s). 5-15 tokens were not measured: 8 splits it.
// Since the tiled kernel scales only the tokens a step has (LOWER, gemm_tiled.cu), 3-7 tokens go
// to it too where it fits (rows of a multiple of 128 values): 4 streams of llama3-8b 980 -> 1315
// tok/s, 2 streams slower there (679 against 790), so 2 tokens keep the GEMV (H100, twentieth
// session). The first mma kernel (rows of other lengths) keeps 8.
constexpr int kDefaultMmaMinTokens = 8;
constexpr int kDefaultTiledMinTokens = 3;

// The crossover for a weight the tiled kernel takes or not; KESTREL_CUDA_MMA_MIN=N sets N for
// both (to compare), 0 turns the tensor-core products off.
int mmaMinTokens(bool tiled) {
    static const int fromEnv = [] {
        const char* e = std::getenv("KESTREL_CUDA_MMA_MIN");
        return e ? std::atoi(e) : -1;
    }();
    return fromEnv >= 0 ? fromEnv : tiled ? kDefaultTiledMinTokens : kDefaultMmaMinTokens;
}

template <DevFormat F, int NT8>
void launchTiles(const TiledJobs& jobs, unsigned tiles, Q8Act xq, int64_t tokens, cudaStream_t s) {
    const dim3 grid(tiles, ceilDiv(tokens, 8 * NT8));
    launchK(gemmMmaKernel<F, NT8>, grid, dim3(kSplitWarps * 32), s, jobs, xq, tokens);
}

template <DevFormat F>
void launchFormat(const TiledJobs& jobs, unsigned tiles, Q8Act xq, int64_t tokens, cudaStream_t s) {
    // The smallest tile that covers the tokens, up to 64 per tile (more tokens: more tiles in y).
    if (tokens <= 8) launchTiles<F, 1>(jobs, tiles, xq, tokens, s);
    else if (tokens <= 16) launchTiles<F, 2>(jobs, tiles, xq, tokens, s);
    else if (tokens <= 32) launchTiles<F, 4>(jobs, tiles, xq, tokens, s);
    else launchTiles<F, 8>(jobs, tiles, xq, tokens, s);
}

}  // namespace

bool gemmMmaFits(const DevMatrix& w, int64_t tokens) {
    if (w.format == DevFormat::F16 || w.cols % 32 != 0 || deviceMajor() < 8) return false;
    const int minTokens = mmaMinTokens(gemmTiledFits(w));
    return minTokens > 0 && tokens >= minTokens;
}

void launchGemmMma(const GemvJob* list, int count, Q8Act xq, int64_t tokens, cudaStream_t stream) {
    if (tokens <= 0 || count <= 0) return;
    bool tiled = true;
    for (int i = 0; i < count; ++i) tiled = tiled && gemmTiledFits(list[i].w);
    if (tiled) {
        launchGemmTiled(list, count, xq, tokens, stream);
        return;
    }
    const TiledJobs jobs = tileJobs(list, count, kRowsPerTile);
    if (jobs.total == 0) return;
    forIntegerFormat(jobs.j[0].w.format, [&](auto format) {
        launchFormat<decltype(format)::value>(jobs, jobs.total, xq, tokens, stream);
    });
}

}  // namespace kestrel::cuda
