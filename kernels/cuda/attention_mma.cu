// Tensor-core pass 1 of one-token attention (see attention_mma.cuh).
//
// A block takes one kv head, its whole query-head group (the M rows of
// mma.m16n8k16; rows past the group are zeros) and one range of keys; its W
// warps walk the range in chunks of 16 keys (warp w: chunks w, w + W, ...).
// Whole: a short context's keys are one range of 8 warps, and the block
// writes the normalised output (and its int8 form) itself: no partials and no
// combine kernel, one kernel boundary fewer a layer.
// Keys never pass through shared memory: each thread loads 16-byte pieces of
// K and V rows straight into the registers that serve as mma fragments, which
// needs two free permutations:
//  - S = Q K^T sums over the head dimension, so the order of the dimensions
//    inside a k-step is free: thread (g, t4) (lane = 4 g + t4) loads dims
//    32 c + 8 t4 .. + 7 of key g of an 8-key tile, and takes the same dims of
//    its queries for A.
//  - O = P V sums over keys, and V's B fragment wants two keys per register:
//    the thread loads dims 64 h + 8 g .. + 7 of keys 2 t4, 2 t4 + 1, 2 t4 + 8,
//    2 t4 + 9 of the chunk and pairs their halves with one byte permute each.
//    Output tile j then holds dims 64 (j / 8) + 8 n + j % 8 for column n.
// S comes out in the C layout, which is P's A layout (FlashAttention-2's
// register reuse), so the softmax never leaves the registers either.
#include "attention_dev.cuh"
#include "attention_mma.cuh"
#include "attention_splits.cuh"
#include "cuda_common.cuh"
#include "mma_ptx.cuh"

namespace kestrel::cuda {
namespace {

constexpr int kMmaWarps = 4;    // a range's warps when the keys are split
constexpr int kWholeWarps = 8;  // a whole context's: 8 x 212 registers fit an SM at D = 128
constexpr int kChunk = 16;  // keys per warp step: one k-step of P V

// The K and V pieces of one chunk a thread holds (see the file comment).
template <int D>
struct ChunkRegs {
    uint4 k[2][D / 32];  // [8-key tile][32-dim slice]
    uint4 v[4][D / 64];  // [key 2 t4, 2 t4 + 1, 2 t4 + 8, 2 t4 + 9][64-dim slice]
};

// Keys past `end` read key `start` instead (written, finite; their scores are masked).
__device__ __forceinline__ int64_t clampKey(int64_t j, int64_t start, int64_t end) { return j < end ? j : start; }

// 16-byte pieces of NK rows of a K or V slab: row i is key keyOf(i), its pieces
// start at element col and lie `stride` elements apart. Only the keys that
// satisfy take(key) are loaded: the early loads before pdlWait, the rest after it.
template <int NK, int NP, typename KeyOf, typename Take>
__device__ __forceinline__ void loadPieces(const KvDev& kv, const void* slab, const int32_t* table, int64_t col,
                                           int stride, KeyOf keyOf, Take take, uint4 (&out)[NK][NP]) {
#pragma unroll
    for (int i = 0; i < NK; ++i) {
        const int64_t j = keyOf(i);
        if (!take(j)) continue;
        const __half* row = static_cast<const __half*>(slab) + kvRowOffset(kv, table, j) + col;
#pragma unroll
        for (int c = 0; c < NP; ++c) out[i][c] = *reinterpret_cast<const uint4*>(row + stride * c);
    }
}

// Chunk kb's K pieces (keys kb + g, kb + 8 + g; dims 32 c + 8 t4 ..) and V pieces
// (keys kb + 2 t4 + {0, 1, 8, 9}; dims 64 h + 8 g ..) of this thread.
template <int D, typename Take>
__device__ __forceinline__ void loadChunkK(const KvDev& kv, const int32_t* table, int64_t headOff, int64_t kb,
                                           int64_t start, int64_t end, int g, int t4, ChunkRegs<D>& r, Take take) {
    const auto keyOf = [&](int n) { return clampKey(kb + 8 * n + g, start, end); };
    loadPieces(kv, kv.k, table, headOff + 8 * t4, 32, keyOf, take, r.k);
}
template <int D, typename Take>
__device__ __forceinline__ void loadChunkV(const KvDev& kv, const int32_t* table, int64_t headOff, int64_t kb,
                                           int64_t start, int64_t end, int g, int t4, ChunkRegs<D>& r, Take take) {
    const auto keyOf = [&](int i) { return clampKey(kb + 2 * t4 + (i & 1) + 8 * (i >> 1), start, end); };
    loadPieces(kv, kv.v, table, headOff + 8 * g, 64, keyOf, take, r.v);
}

__device__ __forceinline__ uint32_t word(const uint4& v, int i) {
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// GR: query rows kept (4 or 8: the group, padded); D: head size (64 or 128); W: warps.
// Whole: one range of every visible key (gridDim.y == 1), written to out / q8 / q8meta;
// otherwise partials in scratchO / scratchML for attnCombineKernel.
template <int D, int GR, int W, bool Whole>
__global__ void __launch_bounds__(W * 32, Whole ? 1 : 2)
    attnSplitMmaKernel(const float* __restrict__ q, const int32_t* __restrict__ positions, KvDev kv, AttentionDev p,
                       float* __restrict__ scratchO, float2* __restrict__ scratchML, float* __restrict__ out,
                       int8_t* __restrict__ q8, float2* __restrict__ q8meta) {
    const int t = blockIdx.z;
    const int group = p.heads / p.kvHeads;
    const int kvh = blockIdx.x;
    const int h0 = kvh * group;
    const int pos = positions[t];
    const Range r = Whole ? wholeRange(pos, p) : visibleRange(pos, p);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t4 = lane & 3;
    const int64_t headOff = static_cast<int64_t>(kvh) * D;
    const int32_t* table = kvTableOf(kv, t);
    __shared__ float sm[W][GR], sl[W][GR];
    __shared__ float so[W][GR][D];

    for (int split = blockIdx.y, pass = 0; split < r.active; split += gridDim.y, ++pass) {
        const int64_t start = r.first + split * r.splitLen;
        const int64_t end = min(start + r.splitLen, static_cast<int64_t>(pos) + 1);
        // Only position pos is written by this step (the KV write before this kernel), so a
        // decode row's earlier keys may be requested before the wait (see attention.cu).
        const bool early = (gridDim.z == 1 || t < p.distinctRows) && pass == 0;
        int64_t kb = start + kChunk * warp;
        ChunkRegs<D> cur;
        const auto before = [&](int64_t j) { return early && j < pos; };
        const auto after = [&](int64_t j) { return !(early && j < pos); };
        const auto all = [](int64_t) { return true; };
        if (kb < end) {
            loadChunkK<D>(kv, table, headOff, kb, start, end, g, t4, cur, before);
            loadChunkV<D>(kv, table, headOff, kb, start, end, g, t4, cur, before);
        }
        if (pass == 0) pdlEnter();
        if (kb < end) {
            loadChunkK<D>(kv, table, headOff, kb, start, end, g, t4, cur, after);
            loadChunkV<D>(kv, table, headOff, kb, start, end, g, t4, cur, after);
        }

        // Queries of row g (zeros past the group), scaled, in the dims order of the K pieces.
        uint32_t qa[D / 16][2];
        {
            const bool real = g < group && g < GR;
            const float* qrow = q + (static_cast<int64_t>(t) * p.heads + h0 + (real ? g : 0)) * D + 8 * t4;
            const float f = real ? p.scale : 0.0f;
#pragma unroll
            for (int c = 0; c < D / 32; ++c) {
                const float4 a = *reinterpret_cast<const float4*>(qrow + 32 * c);
                const float4 b = *reinterpret_cast<const float4*>(qrow + 32 * c + 4);
                qa[2 * c][0] = packHalf2(a.x * f, a.y * f);
                qa[2 * c][1] = packHalf2(a.z * f, a.w * f);
                qa[2 * c + 1][0] = packHalf2(b.x * f, b.y * f);
                qa[2 * c + 1][1] = packHalf2(b.z * f, b.w * f);
            }
        }
        float m = -INFINITY, l = 0.0f;  // row g: running max (log2 domain), this thread's part of the sum
        float o[D / 8][4];
#pragma unroll
        for (int n = 0; n < D / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;

        for (; kb < end; kb += kChunk * W) {
            // S = Q K^T for the chunk's two 8-key tiles; even and odd k-steps accumulate apart
            // so that each dependent chain of mma is half as long.
            float s[2][2][4] = {};
#pragma unroll
            for (int c = 0; c < D / 32; ++c)
#pragma unroll
                for (int n = 0; n < 2; ++n) {
                    const uint32_t a0[4] = {qa[2 * c][0], 0u, qa[2 * c][1], 0u};
                    const uint32_t a1[4] = {qa[2 * c + 1][0], 0u, qa[2 * c + 1][1], 0u};
                    mma16816(s[n][0], a0, cur.k[n][c].x, cur.k[n][c].y);
                    mma16816(s[n][1], a1, cur.k[n][c].z, cur.k[n][c].w);
                }
            const int64_t next = kb + kChunk * W;
            // The next chunk's K while this one's softmax and P V run.
            if (next < end) loadChunkK<D>(kv, table, headOff, next, start, end, g, t4, cur, all);
            float x[2][2];
            float mx = -INFINITY;
#pragma unroll
            for (int n = 0; n < 2; ++n)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    float v = s[n][0][e] + s[n][1][e];
                    if (p.softcap > 0.0f) v = p.softcap * tanhf(v / p.softcap);
                    v = kb + 8 * n + 2 * t4 + e < end ? v * kLog2e : -INFINITY;
                    x[n][e] = v;
                    mx = fmaxf(mx, v);
                }
            const float mNew = fmaxf(m, quadMax(mx));  // finite: the chunk's first key exists
            const float corr = exp2f(m - mNew);        // 0 while m = -inf
            float sum = 0.0f;
#pragma unroll
            for (int n = 0; n < 2; ++n)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    x[n][e] = exp2f(x[n][e] - mNew);
                    sum += x[n][e];
                }
            l = l * corr + sum;
            m = mNew;
            // O = O * corr + P V (rows g + 8 stay zero: their P is zero).
            const uint32_t pa[4] = {packHalf2(x[0][0], x[0][1]), 0u, packHalf2(x[1][0], x[1][1]), 0u};
#pragma unroll
            for (int j = 0; j < D / 8; ++j) {
                o[j][0] *= corr;
                o[j][1] *= corr;
                const int h = j / 8, w = (j % 8) / 2;
                const uint32_t sel = (j & 1) ? 0x7632u : 0x5410u;
                mma16816(o[j], pa, __byte_perm(word(cur.v[0][h], w), word(cur.v[1][h], w), sel),
                         __byte_perm(word(cur.v[2][h], w), word(cur.v[3][h], w), sel));
            }
            if (next < end) loadChunkV<D>(kv, table, headOff, next, start, end, g, t4, cur, all);
        }

        // Merge the warps: each warp's state of its rows into shared memory, then one partial.
        l = quadSum(l);
        if (g < GR) {
            if (t4 == 0) {
                sm[warp][g] = m * kLn2;  // natural log for the combine
                sl[warp][g] = l;
            }
#pragma unroll
            for (int j = 0; j < D / 8; ++j) {
                const int d0 = 64 * (j / 8) + 16 * t4 + j % 8;
                so[warp][g][d0] = o[j][0];
                so[warp][g][d0 + 8] = o[j][1];
            }
        }
        __syncthreads();
        if constexpr (Whole)
            writeWholeOutput(sm, sl, so, min(group, GR), D, static_cast<int64_t>(t) * p.heads + h0, out, q8, q8meta);
        else
            writeSplitPartial(sm, sl, so, min(group, GR), D, (static_cast<int64_t>(t) * p.heads + h0) * p.maxSplits,
                              p.maxSplits, split, scratchO, scratchML);
        __syncthreads();  // the next range reuses sm, sl, so
    }
}

template <int D, bool Whole>
void launchMma(int group, dim3 grid, cudaStream_t stream, const float* q, const int32_t* positions, const KvDev& kv,
               const AttentionDev& p, float* scratchO, float2* scratchML, float* out, int8_t* q8, float2* q8meta) {
    constexpr int W = Whole ? kWholeWarps : kMmaWarps;  // 4 warps for a whole context: llama3-8b 1755 -> 1790 us a step
    const dim3 block(W * 32);
    if (group <= 4)
        launchK(attnSplitMmaKernel<D, 4, W, Whole>, grid, block, stream, q, positions, kv, p, scratchO, scratchML, out, q8, q8meta);
    else
        launchK(attnSplitMmaKernel<D, 8, W, Whole>, grid, block, stream, q, positions, kv, p, scratchO, scratchML, out, q8, q8meta);
}

}  // namespace

// Groups of 2-8 query heads: with one head per kv head (llama2-7b) the key-stream kernel
// folds a single head per key, cheaper than a 16-row mma (measured 594 against 570 tok/s).
bool attentionMmaFits(const KvDev& kv, const AttentionDev& p, const float* q) {
    static const bool enabled = switchedOn("KESTREL_CUDA_ATTN_MMA");
    const auto aligned = [](const void* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15) == 0; };
    const int group = p.kvHeads > 0 && p.heads % p.kvHeads == 0 ? p.heads / p.kvHeads : 0;
    return enabled && kv.f16 && (p.headDim == 64 || p.headDim == 128) && kv.rowStride % 8 == 0 && aligned(kv.k) &&
           aligned(kv.v) && aligned(q) && group >= 2 && group <= 8 && deviceMajor() >= 8;
}

void launchAttentionMma(const float* q, int64_t tokens, const int32_t* positions, const KvDev& kv,
                        const AttentionDev& p, int64_t blocksY, float* scratchO, float2* scratchML,
                        cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>(p.kvHeads), static_cast<unsigned>(blocksY), static_cast<unsigned>(tokens));
    const int group = p.heads / p.kvHeads;
    if (p.headDim == 64) launchMma<64, false>(group, grid, stream, q, positions, kv, p, scratchO, scratchML, nullptr, nullptr, nullptr);
    else launchMma<128, false>(group, grid, stream, q, positions, kv, p, scratchO, scratchML, nullptr, nullptr, nullptr);
}

void launchAttentionMmaWhole(const float* q, int64_t tokens, const int32_t* positions, const KvDev& kv,
                             const AttentionDev& p, float* out, int8_t* q8, float2* q8meta, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>(p.kvHeads), 1, static_cast<unsigned>(tokens));
    const int group = p.heads / p.kvHeads;
    if (p.headDim == 64) launchMma<64, true>(group, grid, stream, q, positions, kv, p, nullptr, nullptr, out, q8, q8meta);
    else launchMma<128, true>(group, grid, stream, q, positions, kv, p, nullptr, nullptr, out, q8, q8meta);
}

}  // namespace kestrel::cuda
