// Tensor-core products streamed through shared memory (see gemm_tiled.cuh).
//
// Block: 4 warps (or two groups of 4 that split each stage's column blocks),
// 128 weight rows (warp w of a group: rows 32w..32w+31, four 8-row
// fragments) x 16 * MT tokens (MT 16-token fragments), one column range. A
// stage holds 4 or 8 blocks of 32 columns (8 for up to 16 tokens where the
// rows allow: a Q4 row's 128 bytes per stage are then one whole cache line):
// the rows' quants and scales, the tokens' int8 values and (d, d * sum) pairs.
// Shared rows are padded by 16 bytes so that the 8 rows (or tokens) one
// fragment load touches fall in distinct banks.
//
// mma.m16n8k32 fragments (lane = 4 g + t): A (tokens) holds tokens g, g + 8 at
// k = 4t..4t+3 and 16+4t..16+4t+3; B (weights) holds row g at the same k; C
// holds tokens g, g + 8 and rows 2t, 2t + 1. The int32 dot of one 32-block is
// scaled in float as the GEMV does (gemv.cuh's formats).
#include "cuda_common.cuh"
#include "gemm_jobs.cuh"
#include "gemm_tiled.cuh"
#include "mma_ptx.cuh"
#include "ops_dev.cuh"

#include <algorithm>
#include <mutex>
#include <type_traits>
#include <unordered_map>

namespace kestrel::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kRows = 128;     // weight rows per block
constexpr int kMinStageBlocks = 4;  // 32-column blocks per stage, at least (the columns must be whole stages)
constexpr int kPad = 16;       // bytes after each shared row
constexpr int kHalfRows = kRows / 2;  // a GLU tile: this many gate rows, then the same up rows

template <DevFormat F, int MT, int kStageBlocks>
struct Layout {
    static constexpr int kTokens = 16 * MT;
    static constexpr int wRow = kStageBlocks * quantBytes<F>();  // quant bytes per row per stage
    static constexpr int wStride = wRow + kPad;
    static constexpr int sRow = kStageBlocks * scaleBytes<F>();  // scale bytes per row per stage: 8, 16 or 32
    static constexpr int aRow = kStageBlocks * 32;
    static constexpr int aStride = aRow + kPad;
    static constexpr int mRow = kStageBlocks * 8;                // (d, d * sum) per token per stage
    static constexpr int mStride = mRow + kPad;                  // the 8 tokens of a fragment in distinct banks
    static constexpr int wOff = 0;
    static constexpr int sOff = wOff + kRows * wStride;
    static constexpr int aOff = sOff + kRows * sRow;
    static constexpr int mOff = aOff + kTokens * aStride;
    static constexpr int stageBytes = mOff + kTokens * mStride;
    static constexpr int stages = stageBytes * 4 <= 112 * 1024 ? 4 : 3;  // two blocks per SM
    static constexpr int smemBytes = stageBytes * stages;
    static_assert(sRow == 8 || sRow % 16 == 0, "scale rows are copied in 8- or 16-byte pieces");
    // The warp groups' reduction area (kWarps x kTokens x 32 floats per group after the first)
    // and the GLU epilogue's finished tile (token rows of tStride floats), in the stage buffers.
    static constexpr int groupBytes = kWarps * kTokens * 32 * 4;
    static constexpr int tStride = kRows + 4;
    static constexpr int finBytes = kTokens * tStride * 4;
};

// The rows a block multiplies. A plain tile is 128 consecutive rows of one job; a GLU
// tile is 64 rows of gate (tile rows 0-63) and the same 64 rows of up (64-127), so one
// block holds both halves of its outputs.
template <bool GLU>
struct TileRows {
    const unsigned char *qs0, *qs1, *sc0, *sc1;
    int64_t base;  // the first row (of each matrix, for a GLU tile)
    int64_t rows;  // of each matrix
    // Selects, not arrays: a run-time index would put them in local memory.
    __device__ __forceinline__ int64_t row(int r) const { return base + (GLU ? r % kHalfRows : r); }
    __device__ __forceinline__ const unsigned char* qs(int r) const { return !GLU || r < kHalfRows ? qs0 : qs1; }
    __device__ __forceinline__ const unsigned char* sc(int r) const { return !GLU || r < kHalfRows ? sc0 : sc1; }
};

// One block's int32 dot (biased: kBiasedZero), scaled: the row's scale (d, and
// the min for Q4_1) with the token's (d, d * sum of its quants). Q8_16 takes
// two dots (lo: values 0-15, hi: 16-31).
template <DevFormat F>
__device__ __forceinline__ float scaledDot(int lo, int hi, const unsigned char* ws, float2 am) {
    if constexpr (F == DevFormat::Q4_0) {
        return __half2float(lds<__half>(ws)) * (am.x * biasedIntToFloat(lo) - 8.0f * am.y);
    } else if constexpr (F == DevFormat::Q4_1) {
        const float2 dm = __half22float2(lds<__half2>(ws));
        return dm.x * am.x * biasedIntToFloat(lo) + dm.y * am.y;
    } else if constexpr (F == DevFormat::Q8_0) {
        return __half2float(lds<__half>(ws)) * am.x * biasedIntToFloat(lo);
    } else {  // Q8_16: (d of values 0-15, d of 16-31), (min, 0)
        const float2 d = __half22float2(lds<__half2>(ws));
        const float m = __low2float(lds<__half2>(ws + 4));
        return am.x * (d.x * biasedIntToFloat(lo) + d.y * biasedIntToFloat(hi)) + m * am.y;
    }
}

// The GLU tile's epilogue: out = act(gate) * up for its 64 rows of each token, and their
// int8 form for the next product (8 lanes per 32-block, as the norms quantise).
// fin: the finished tile, token rows of tStride floats, gate in [0, 64), up in [64, 128).
template <int kTokens, int tStride, int kThreads>
__device__ __forceinline__ void gluQuantizeTile(const float* fin, const GluQ8Out& glu, int64_t t0, int64_t tokens,
                                                int64_t r0) {
    __syncthreads();
    constexpr int quads = kHalfRows / 4;  // per token; 8-lane groups are whole 32-blocks
    static_assert(kThreads % 32 == 0 && quads % 8 == 0, "whole quant blocks per 8-lane group");
    for (int i = threadIdx.x; i < kTokens * quads; i += kThreads) {
        const int tk = i / quads, c = (i % quads) * 4;
        const float* g = fin + tk * tStride + c;
        const float* u = g + kHalfRows;
        const float4 o = make_float4(gluAct(g[0], glu.act) * u[0], gluAct(g[1], glu.act) * u[1],
                                     gluAct(g[2], glu.act) * u[2], gluAct(g[3], glu.act) * u[3]);
        float2 meta;
        const int word = quantizeQuad(o, meta);  // every lane of the warp: it shuffles
        const int64_t tok = t0 + tk;
        if (tok >= tokens) continue;
        const int64_t at = tok * glu.cols + r0 + c;
        *reinterpret_cast<float4*>(glu.out + at) = o;
        *reinterpret_cast<int*>(glu.q8 + at) = word;
        if ((threadIdx.x & 7) == 0) glu.meta[at / 32] = meta;
    }
}

// GLU: tiles of gate and up rows whose epilogue writes glu's outputs (gluQuantizeTile).
// LOWER (MT = 1, a step of up to 8 tokens): only tokens 0-7 of the 16-token fragment exist,
// so the C values of tokens g + 8 are neither loaded for nor scaled. Why: the scaling is half
// of the inner loop's instructions (SASS). With this skip (as a run-time branch then) 4-token
// steps on the tiled kernel gave 4 streams of llama3-8b 1314 tok/s against 980 on the
// 4-token GEMV (H100, docs/PERFORMANCE.md, twentieth session); that branch build also ran
// 16 tokens 2 % slower, so the skip is a compile-time variant and 9-16 tokens run as before.
template <DevFormat F, int MT, int kStageBlocks, int KG, bool GLU, bool LOWER>
__global__ void __launch_bounds__(kWarps * KG * 32, KG == 2 ? 2 : 1)
    gemmTiledKernel(TiledJobs jobs, Q8Act xq, int64_t tokens, int splits, float* __restrict__ partials,
                    unsigned* __restrict__ counters, GluQ8Out glu) {
    using Lay = Layout<F, MT, kStageBlocks>;
    static_assert(!LOWER || MT == 1, "the lower half of one 16-token fragment");
    constexpr int QB = quantBytes<F>(), SB = scaleBytes<F>();
    extern __shared__ __align__(16) unsigned char smem[];
    const int tid = threadIdx.x, lane = tid & 31, g = lane >> 2, t = lane & 3;
    // KG groups of 4 warps share each stage's column blocks (group k takes blocks k, k + KG, ...): more
    // warps in flight for the same shared memory; the groups' sums meet in shared memory at the end.
    static_assert(KG == 1 || KG == 2 || KG == 4, "1, 2 or 4 groups");
    constexpr int finOff = (KG > 1 ? KG - 1 : 1) * Lay::groupBytes;
    static_assert(finOff + Lay::finBytes <= Lay::smemBytes, "reduction area and finished tile fit in the stages");
    const int warp = (tid >> 5) & (kWarps - 1), kGroup = tid >> 7;

    unsigned tile = blockIdx.y;  // token tiles of one row tile run side by side (its weights stay in L2)
    const GemvJob& job = GLU ? jobs.j[0] : jobOfTile(jobs, tile);
    const int64_t rows = job.w.rows, cols = job.w.cols, nb = cols / 32;
    // A plain tile's outputs are rows r0.. of job.y; a GLU tile's are rows r0.. of glu.
    const int64_t r0 = static_cast<int64_t>(tile) * (GLU ? kHalfRows : kRows);
    TileRows<GLU> tr;
    tr.rows = rows;
    tr.base = r0;
    tr.qs0 = static_cast<const unsigned char*>(job.w.qs);
    tr.sc0 = static_cast<const unsigned char*>(job.w.scales);
    tr.qs1 = static_cast<const unsigned char*>(jobs.j[1].w.qs);
    tr.sc1 = static_cast<const unsigned char*>(jobs.j[1].w.scales);
    const int64_t t0 = static_cast<int64_t>(blockIdx.x) * Lay::kTokens;
    const int split = blockIdx.z;
    // Column blocks of this split, whole stages.
    const int64_t stagesAll = nb / kStageBlocks;
    const int64_t perSplit = (stagesAll + splits - 1) / splits;
    const int64_t sBegin = split * perSplit;
    const int nStages = static_cast<int>(max(static_cast<int64_t>(0), min(stagesAll, sBegin + perSplit) - sBegin));

    const auto* xqs = reinterpret_cast<const unsigned char*>(xq.q);
    const auto* xmeta = reinterpret_cast<const unsigned char*>(xq.meta);

    // A thread copies the same rows and 16-byte pieces in every stage; only the column moves. So the
    // loops below have fixed trip counts and their row offsets do not depend on the stage: the compiler
    // keeps them out of the stage loop (with a runtime-strided loop the per-copy index maths was half of
    // the kernel's instructions, docs/PERFORMANCE.md).
    constexpr int kThreads = kWarps * KG * 32;
    const int64_t kb0 = sBegin * kStageBlocks;  // first column block of this split
    auto loadWeights = [&](int st) {
        unsigned char* s = smem + (st % Lay::stages) * Lay::stageBytes;
        const int64_t kb = kb0 + static_cast<int64_t>(st) * kStageBlocks;
        constexpr int wChunks = Lay::wRow / 16;
        static_assert(kThreads % wChunks == 0 && kRows % (kThreads / wChunks) == 0, "whole passes");
        constexpr int wRowsPerPass = kThreads / wChunks;
        const int wr = tid / wChunks, wc = tid % wChunks;
#pragma unroll
        for (int j = 0; j < kRows / wRowsPerPass; ++j) {
            const int r = wr + j * wRowsPerPass;
            const int64_t row = tr.row(r);
            const bool ok = row < tr.rows;
            cpAsync<16>(s + Lay::wOff + r * Lay::wStride + wc * 16, tr.qs(r) + ((ok ? row : 0) * nb + kb) * QB + wc * 16, ok);
        }
        constexpr int sPieces = Lay::sRow == 8 ? 1 : Lay::sRow / 16;
        constexpr int sAll = kRows * sPieces;
#pragma unroll
        for (int j = 0; j < (sAll + kThreads - 1) / kThreads; ++j) {
            const int i = tid + j * kThreads, r = i / sPieces, c = i % sPieces;
            if (sAll % kThreads != 0 && i >= sAll) break;
            const int64_t row = tr.row(r);
            const bool ok = row < tr.rows;
            const unsigned char* src = tr.sc(r) + ((ok ? row : 0) * nb + kb) * SB;
            if constexpr (Lay::sRow == 8) cpAsync<8>(s + Lay::sOff + r * Lay::sRow, src, ok);
            else cpAsync<16>(s + Lay::sOff + r * Lay::sRow + c * 16, src + c * 16, ok);
        }
    };
    auto loadTokens = [&](int st) {
        unsigned char* s = smem + (st % Lay::stages) * Lay::stageBytes;
        const int64_t kb = kb0 + static_cast<int64_t>(st) * kStageBlocks;
        constexpr int aChunks = Lay::aRow / 16, mChunks = Lay::mRow / 16, pieces = Lay::kTokens * (aChunks + mChunks);
#pragma unroll
        for (int j = 0; j < (pieces + kThreads - 1) / kThreads; ++j) {
            const int i = tid + j * kThreads;
            if (pieces % kThreads != 0 && i >= pieces) break;
            const int tk = i / (aChunks + mChunks), c = i % (aChunks + mChunks);
            const bool ok = t0 + tk < tokens;
            const int64_t tok = ok ? t0 + tk : 0;
            if (c < aChunks)
                cpAsync<16>(s + Lay::aOff + tk * Lay::aStride + c * 16, xqs + tok * cols + kb * 32 + c * 16, ok);
            else
                cpAsync<16>(s + Lay::mOff + tk * Lay::mStride + (c - aChunks) * 16,
                            xmeta + (tok * nb + kb) * 8 + (c - aChunks) * 16, ok);
        }
    };

    // Weights (constant during a step) may be requested before the previous kernel ends.
    pdlTrigger();
    for (int st = 0; st < Lay::stages - 1 && st < nStages; ++st) loadWeights(st);
    pdlWait();
    for (int st = 0; st < Lay::stages - 1; ++st) {
        if (st < nStages) loadTokens(st);
        cpAsyncCommit();  // one group per stage, empty ones too, so the wait counts stay fixed
    }

    float acc[MT][4][4];
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int n = 0; n < 4; ++n) acc[m][n][0] = acc[m][n][1] = acc[m][n][2] = acc[m][n][3] = 0.0f;

    for (int st = 0; st < nStages; ++st) {
        cpAsyncWait<Lay::stages - 2>();
        __syncthreads();  // stage st is in; every warp is done with stage st - 1's buffer
        const int next = st + Lay::stages - 1;
        if (next < nStages) {
            loadWeights(next);
            loadTokens(next);
        }
        cpAsyncCommit();
        const unsigned char* s = smem + (st % Lay::stages) * Lay::stageBytes;
        // Wide token tiles keep one block's fragments live at a time (registers).
#pragma unroll(MT >= 4 ? 1 : 4)
        for (int kb = kGroup; kb < kStageBlocks; kb += KG) {
            uint32_t a[MT][4];
            float2 ma[MT], mb[MT];
#pragma unroll
            for (int m = 0; m < MT; ++m) {
                const unsigned char* ap = s + Lay::aOff + (m * 16 + g) * Lay::aStride + kb * 32 + 4 * t;
                a[m][0] = lds<uint32_t>(ap);
                a[m][2] = lds<uint32_t>(ap + 16);
                ma[m] = lds<float2>(s + Lay::mOff + (m * 16 + g) * Lay::mStride + kb * 8);
                if constexpr (LOWER) {
                    a[m][1] = a[m][3] = 0u;
                    mb[m] = make_float2(0.0f, 0.0f);
                } else {
                    a[m][1] = lds<uint32_t>(ap + 8 * Lay::aStride);
                    a[m][3] = lds<uint32_t>(ap + 8 * Lay::aStride + 16);
                    mb[m] = lds<float2>(s + Lay::mOff + (m * 16 + g + 8) * Lay::mStride + kb * 8);
                }
            }
#pragma unroll
            for (int n = 0; n < 4; ++n) {
                const int rl = warp * 32 + n * 8;  // the fragment's first row in the tile
                const unsigned char* wp = s + Lay::wOff + (rl + g) * Lay::wStride + kb * QB + 4 * t;
                uint32_t b0, b1;
                if constexpr (QB == 16) {
                    const uint32_t word = lds<uint32_t>(wp);
                    b0 = word & 0x0f0f0f0fu;
                    b1 = (word >> 4) & 0x0f0f0f0fu;
                } else {
                    b0 = lds<uint32_t>(wp);
                    b1 = lds<uint32_t>(wp + 16);
                }
                const unsigned char* s0 = s + Lay::sOff + (rl + 2 * t) * Lay::sRow + kb * SB;
                const unsigned char* s1 = s0 + Lay::sRow;
#pragma unroll
                for (int m = 0; m < MT; ++m) {
                    // Started at kBiasedZero: the sums come out as float bits (biasedIntToFloat).
                    int lo[4] = {kBiasedZero, kBiasedZero, kBiasedZero, kBiasedZero};
                    int hi[4] = {kBiasedZero, kBiasedZero, kBiasedZero, kBiasedZero};
                    if constexpr (F == DevFormat::Q8_16) {
                        // The halves of a block have their own scales: one mma each.
                        mma16832(lo, a[m], b0, 0u);
                        mma16832(hi, a[m], 0u, b1);
                    } else {
                        mma16832(lo, a[m], b0, b1);
                    }
                    acc[m][n][0] += scaledDot<F>(lo[0], hi[0], s0, ma[m]);
                    acc[m][n][1] += scaledDot<F>(lo[1], hi[1], s1, ma[m]);
                    if constexpr (!LOWER) {  // tokens g + 8
                        acc[m][n][2] += scaledDot<F>(lo[2], hi[2], s0, mb[m]);
                        acc[m][n][3] += scaledDot<F>(lo[3], hi[3], s1, mb[m]);
                    }
                }
            }
        }
    }
    cpAsyncWait<0>();
    if constexpr (KG > 1) {
        __syncthreads();  // every stage buffer is free
        // Group k > 0 leaves its sums in area k - 1; group 0 adds them in group order.
        float* red = reinterpret_cast<float*>(smem) + warp * (MT * 16 * 32) + lane;
        constexpr int groupFloats = Lay::groupBytes / 4;
        if (kGroup > 0) {
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int i = 0; i < 16; ++i) red[(kGroup - 1) * groupFloats + (m * 16 + i) * 32] = acc[m][i / 4][i % 4];
        }
        __syncthreads();
        if (kGroup == 0) {
#pragma unroll
            for (int k = 1; k < KG; ++k)
#pragma unroll
                for (int m = 0; m < MT; ++m)
#pragma unroll
                    for (int i = 0; i < 16; ++i) acc[m][i / 4][i % 4] += red[(k - 1) * groupFloats + (m * 16 + i) * 32];
        }
    }
    const bool writer = kGroup == 0;

    // C (token g or g + 8, rows 2t and 2t + 1 of fragment n) to y, or to this split's partial.
    auto forEachOut = [&](auto&& f) {
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int n = 0; n < 4; ++n)
#pragma unroll
                for (int h = 0; h < 2; ++h) f(m * 16 + g + 8 * h, warp * 32 + n * 8 + 2 * t, acc[m][n][2 * h], acc[m][n][2 * h + 1]);
    };
    // A GLU tile's finished values (token rows of gate then up) meet in shared memory.
    float* fin = reinterpret_cast<float*>(smem + finOff);
    if (GLU && splits == 1) {
        if constexpr (KG == 1) __syncthreads();  // every warp is done with the stage buffers
        if (writer) forEachOut([&](int tk, int rl, float v0, float v1) {
            fin[tk * Lay::tStride + rl] = v0;
            fin[tk * Lay::tStride + rl + 1] = v1;
        });
        gluQuantizeTile<Lay::kTokens, Lay::tStride, kThreads>(fin, glu, t0, tokens, r0);
        return;
    }
    if (splits == 1) {
        if (!writer) return;
        forEachOut([&](int tk, int rl, float v0, float v1) {
            const int64_t tok = t0 + tk, row = r0 + rl;
            if (tok >= tokens) return;
            if (row < rows) job.y[tok * rows + row] = v0;
            if (row + 1 < rows) job.y[tok * rows + row + 1] = v1;
        });
        return;
    }
    const unsigned tileId = blockIdx.y * gridDim.x + blockIdx.x;
    constexpr int kTileFloats = kRows * Lay::kTokens;
    float* mine = partials + (static_cast<int64_t>(tileId) * splits + split) * kTileFloats;
    if (writer) {
        forEachOut([&](int tk, int rl, float v0, float v1) {
            *reinterpret_cast<float2*>(mine + tk * kRows + rl) = make_float2(v0, v1);
        });
    }
    __threadfence();
    __syncthreads();
    __shared__ bool last;
    if (tid == 0) last = atomicAdd(&counters[tileId], 1u) == static_cast<unsigned>(splits) - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    // The tile's last block sums the splits in order and re-arms the counter for the next launch.
    const float* all = partials + static_cast<int64_t>(tileId) * splits * kTileFloats;
    for (int i = tid; i < kTileFloats; i += kThreads) {
        const int tk = i / kRows, rl = i % kRows;
        const int64_t tok = t0 + tk, row = r0 + rl;
        if (tok >= tokens || (!GLU && row >= rows)) continue;
        float sum = 0.0f;
        for (int sp = 0; sp < splits; ++sp) sum += __ldcg(all + static_cast<int64_t>(sp) * kTileFloats + i);
        if (GLU) fin[tk * Lay::tStride + rl] = sum;
        else job.y[tok * rows + row] = sum;
    }
    if (tid == 0) counters[tileId] = 0;
    if (GLU) gluQuantizeTile<Lay::kTokens, Lay::tStride, kThreads>(fin, glu, t0, tokens, r0);
}

// Per stream (one backend's steps run in order on it): split-K partials and tile counters.
struct Workspace {
    float* partials = nullptr;
    size_t partialFloats = 0;
    unsigned* counters = nullptr;
    size_t counterCount = 0;
};

// Grows a zeroed device buffer to `need` elements. The old buffer is never freed: a step graph captured
// earlier holds its address and may be replayed after a larger step grew the buffer (freeing it made
// such replays read freed memory; growth happens a few times per process, the buffers are small). No
// growth while the stream is being captured (synchronising would end the capture): the caller then
// runs without split-K.
template <typename T>
bool grow(cudaStream_t stream, T*& p, size_t& have, size_t need) {
    if (have >= need) return true;
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capturing) != cudaSuccess || capturing != cudaStreamCaptureStatusNone)
        return false;
    T* fresh = nullptr;
    if (cudaMalloc(&fresh, need * sizeof(T)) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    p = fresh;
    cudaMemsetAsync(p, 0, need * sizeof(T), stream);  // counters must start at 0; partials are always written first
    have = need;
    return true;
}

bool ensureWorkspace(cudaStream_t stream, size_t floats, size_t counters, Workspace& out) {
    static std::mutex mu;
    static std::unordered_map<cudaStream_t, Workspace> spaces;
    std::lock_guard lock(mu);
    Workspace& w = spaces[stream];
    if (!grow(stream, w.partials, w.partialFloats, floats) || !grow(stream, w.counters, w.counterCount, counters))
        return false;
    out = w;
    return true;
}

// Launches one instantiation (launchKSmem opts it in to its shared memory).
template <DevFormat F, int MT, int kStageBlocks, int KG, bool GLU, bool LOWER>
void launchInstance(dim3 grid, const TiledJobs& jobs, Q8Act xq, int64_t tokens, int splits, const Workspace& ws,
                    const GluQ8Out& glu, cudaStream_t stream) {
    using Lay = Layout<F, MT, kStageBlocks>;
    launchKSmem(gemmTiledKernel<F, MT, kStageBlocks, KG, GLU, LOWER>, grid, dim3(kWarps * KG * 32), Lay::smemBytes, stream, jobs, xq,
                tokens, splits, ws.partials, ws.counters, glu);
}

template <DevFormat F, int MT, int kStageBlocks, int KG = 1, bool GLU = false, bool LOWER = false>
void launchTiled(const TiledJobs& jobs, Q8Act xq, int64_t tokens, const GluQ8Out& glu, cudaStream_t stream) {
    using Lay = Layout<F, MT, kStageBlocks>;
    const unsigned tiles = jobs.total, tokenTiles = ceilDiv(tokens, Lay::kTokens);
    // Split the columns when the tiles cannot fill two blocks per SM: as many splits as fit in that one
    // wave (never a partial second wave: rounding up made 16 tokens' gate/up 1.7 waves and ffn down 1.09,
    // and 16 streams on llama3-8b went 3850 -> 4220 tok/s when rounded down), keeping >= 4 stages per split.
    const int64_t stagesAll = jobs.j[0].w.cols / 32 / kStageBlocks;
    const int64_t want = 2 * static_cast<int64_t>(smCount()) / (tiles * tokenTiles);
    int splits = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(want, stagesAll / 4)));
    Workspace ws;
    if (splits > 1 &&
        !ensureWorkspace(stream, static_cast<size_t>(tiles) * tokenTiles * splits * kRows * Lay::kTokens,
                         static_cast<size_t>(tiles) * tokenTiles, ws))
        splits = 1;
    const dim3 grid(tokenTiles, tiles, static_cast<unsigned>(splits));
    if constexpr (KG == 2) {
        // A grid of at most one block per SM (the attention output and Q,K,V products of a 16-token step:
        // too few row tiles, and splits keep >= 4 stages) runs 4 groups per block: twice the warps per SM
        // (KESTREL_CUDA_GEMM_KG4=0: 2 groups, to compare).
        static const bool kg4 = switchedOn("KESTREL_CUDA_GEMM_KG4");
        if (kg4 && static_cast<int64_t>(grid.x) * grid.y * grid.z <= smCount()) {
            launchInstance<F, MT, kStageBlocks, 4, GLU, LOWER>(grid, jobs, xq, tokens, splits, ws, glu, stream);
            return;
        }
    }
    launchInstance<F, MT, kStageBlocks, KG, GLU, LOWER>(grid, jobs, xq, tokens, splits, ws, glu, stream);
}

// GLU tiles only for up to 16 tokens (gemmTiledGluFits): their epilogue adds registers, and
// the wider tiles are near the limit already.
template <DevFormat F, bool GLU>
void launchFormat(const TiledJobs& jobs, Q8Act xq, int64_t tokens, const GluQ8Out& glu, cudaStream_t s) {
    // Up to 16 tokens, stages of 8 column blocks where the rows allow (each row's 128 or 256 bytes per
    // stage are whole cache lines), shared by two groups of 4 warps (16 warps per SM instead of 8 in the
    // same shared memory): 16 streams on llama3-8b 2984 -> 3194 -> ~3580 tok/s, docs/PERFORMANCE.md.
    // KESTREL_CUDA_GEMM_STAGE=4 keeps one group and 4-block stages (to compare).
    static const bool wide = [] {
        const char* v = std::getenv("KESTREL_CUDA_GEMM_STAGE");
        return !(v && std::atoi(v) == 4);
    }();
    if (tokens <= 16) {
        // Measured for the 4-bit layouts (Q4_0, Q4_1 and the K-quants repacked to it); the 8-bit ones keep
        // 4-block stages (8 blocks of theirs would leave one block per SM).
        const auto one = [&](auto lower) {
            constexpr bool L = decltype(lower)::value;
            if constexpr (quantBytes<F>() == 16) {
                if (wide && jobs.j[0].w.cols % (32 * 8) == 0) {
                    launchTiled<F, 1, 8, 2, GLU, L>(jobs, xq, tokens, glu, s);
                    return;
                }
            }
            launchTiled<F, 1, 4, 1, GLU, L>(jobs, xq, tokens, glu, s);
        };
        if (tokens <= 8) one(std::true_type{});
        else one(std::false_type{});
    } else if constexpr (GLU) {
        return;  // not reached (gemmTiledGluFits)
    } else if (tokens <= 32) {
        launchTiled<F, 2, 4>(jobs, xq, tokens, glu, s);
    } else {
        launchTiled<F, 4, 4>(jobs, xq, tokens, glu, s);
    }
}

}  // namespace

bool gemmTiledFits(const DevMatrix& w) {
    static const bool enabled = switchedOn("KESTREL_CUDA_GEMM_TILED");
    const auto aligned = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; };
    return enabled && w.format != DevFormat::F16 && w.cols % (32 * kMinStageBlocks) == 0 && aligned(w.qs) &&
           aligned(w.scales) && deviceMajor() >= 8;
}

void launchGemmTiled(const GemvJob* list, int count, Q8Act xq, int64_t tokens, cudaStream_t stream) {
    if (tokens <= 0 || count <= 0) return;
    const TiledJobs jobs = tileJobs(list, count, kRows);
    if (jobs.total == 0) return;
    forIntegerFormat(jobs.j[0].w.format,
                     [&](auto format) { launchFormat<decltype(format)::value, false>(jobs, xq, tokens, GluQ8Out{}, stream); });
}

bool gemmTiledGluFits(const DevMatrix& gate, const DevMatrix& up, int64_t tokens) {
    static const bool enabled = switchedOn("KESTREL_CUDA_GLU_FUSE");
    return enabled && tokens <= 16 && gemmTiledFits(gate) && gemmTiledFits(up) && gate.format == up.format && gate.rows == up.rows &&
           gate.cols == up.cols && gate.rows % kHalfRows == 0;
}

void launchGemmTiledGlu(const DevMatrix& gate, const DevMatrix& up, Q8Act xq, int64_t tokens, const GluQ8Out& out,
                        cudaStream_t stream) {
    if (tokens <= 0 || gate.rows == 0) return;
    // One tile index space: tile i is rows 64i.. of both (the kernel reads j[1] for up's rows).
    TiledJobs jobs{};
    jobs.j[0] = GemvJob{gate, nullptr};
    jobs.j[1] = GemvJob{up, nullptr};
    jobs.count = 1;
    jobs.tiles[0] = jobs.total = static_cast<unsigned>(gate.rows / kHalfRows);
    forIntegerFormat(gate.format, [&](auto format) { launchFormat<decltype(format)::value, true>(jobs, xq, tokens, out, stream); });
}

}  // namespace kestrel::cuda
