#include "attention.cuh"
#include "attention_dev.cuh"
#include "attention_mma.cuh"
#include "attention_splits.cuh"
#include "attention_tile.cuh"
#include "cuda_common.cuh"

#include <algorithm>
#include <cstdlib>

namespace kestrel::cuda {
namespace {

// Warps per block of the one-token pass-1 kernels.
constexpr int kAttnWarps = 4;

// A key stream of the F16 kernels folds KPS keys into the running softmax
// state of its G query heads. LPK lanes hold one row, 8 halves each (kr, vr:
// 16-byte pieces of the K and V rows; qr: the scaled queries' matching 8
// values, zeros for a padding head); has[u] says whether key u exists (a
// missing key's values must be finite: zeros or a real row).
// Every head is folded, padding ones too (their state is never written): a
// loop that stopped at the real heads' count kept each head's dependent chain
// (dot, 4 shuffle levels, exp, rescale) behind the previous head's branch, so
// a warp ran 4 such chains one after another; without the branch they
// interleave (ncu, llama3-8b at depth 4096: pass 1 at 46 % of the SM's
// issue rate with 8 warps per SM, latency-bound, not memory-bound).
template <int G, int KPS, int LPK>
__device__ __forceinline__ void foldHalfKeys(const float (&qr)[G][8], const uint4 (&kr)[KPS], const uint4 (&vr)[KPS],
                                             const bool (&has)[KPS], float softcap, float (&m)[G], float (&l)[G],
                                             float (&acc)[G][8]) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
        float sc[KPS];
#pragma unroll
        for (int u = 0; u < KPS; ++u) {
            const __half2* kh = reinterpret_cast<const __half2*>(&kr[u]);
            float sum = 0.0f;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const float2 k2 = __half22float2(kh[i]);
                sum += qr[g][2 * i] * k2.x + qr[g][2 * i + 1] * k2.y;
            }
            sc[u] = sum;
        }
#pragma unroll
        for (int o = LPK / 2; o > 0; o >>= 1)
#pragma unroll
            for (int u = 0; u < KPS; ++u) sc[u] += __shfl_xor_sync(0xffffffffu, sc[u], o);
        float wu[KPS];
        const float corr = softmaxUpdate<KPS>(sc, has, softcap, m[g], l[g], wu);
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[g][e] *= corr;
#pragma unroll
        for (int u = 0; u < KPS; ++u) {
            const __half2* vh = reinterpret_cast<const __half2*>(&vr[u]);
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const float2 v2 = __half22float2(vh[i]);
                acc[g][2 * i] += wu[u] * v2.x;
                acc[g][2 * i + 1] += wu[u] * v2.y;
            }
        }
    }
}

// The F16 kernels' scaled queries: the 8 values at column c0 of query heads
// h0 .. h0 + ng - 1 of token t (zeros for g >= ng).
template <int G, int D>
__device__ __forceinline__ void loadScaledQueries(const float* __restrict__ q, int64_t t, int heads, int h0, int ng,
                                                  int c0, float scale, float (&qr)[G][8]) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
        const float4* qp = reinterpret_cast<const float4*>(q + (t * heads + h0 + (g < ng ? g : 0)) * D + c0);
        const float4 a = qp[0], b = qp[1];
        const float f = g < ng ? scale : 0.0f;
        qr[g][0] = a.x * f; qr[g][1] = a.y * f; qr[g][2] = a.z * f; qr[g][3] = a.w * f;
        qr[g][4] = b.x * f; qr[g][5] = b.y * f; qr[g][6] = b.z * f; qr[g][7] = b.w * f;
    }
}

// The F16 kernels' end of a range: each key stream's state (m, l, acc; LPK lanes
// per stream, 8 columns each) into shared memory, then merged into the range's
// slot. `sm`, `sl`, `so` are the block's shared arrays; ends with a barrier, so
// the caller may reuse them afterwards.
template <int STREAMS, int G, int D, int LPK>
__device__ __forceinline__ void finishRange(float (&sm)[STREAMS][G], float (&sl)[STREAMS][G], float (&so)[STREAMS][G][D],
                                            int stream, int lane, int c0, const float (&m)[G], const float (&l)[G],
                                            const float (&acc)[G][8], int ng, int64_t slot0, int nsplit, int split,
                                            float* __restrict__ scratchO, float2* __restrict__ scratchML) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
        if (lane % LPK == 0) {
            sm[stream][g] = m[g];
            sl[stream][g] = l[g];
        }
#pragma unroll
        for (int e = 0; e < 8; ++e) so[stream][g][c0 + e] = acc[g][e];
    }
    __syncthreads();
    writeSplitPartial(sm, sl, so, ng, D, slot0, nsplit, split, scratchO, scratchML);
    __syncthreads();
}

constexpr int kMaxGroup = 8;
// Keys per range once a token sees >= 1024 (KESTREL_CUDA_ATTN_DEEP overrides; 0: off):
// llama3-8b at depth 4096 on an H200, 32-key ranges 321.5 tok/s, 64: 324.2, 128: 331.1.
constexpr int kDeepSplitKeys = 128;

// KESTREL_CUDA_ATTN=0: the one-row-per-warp pass 1 for every cache the tensor-core kernel
// (attention_mma.cu) does not take; with KESTREL_CUDA_ATTN_MMA=0 too, for every cache (to compare).
bool wideAttentionEnabled() {
    static const bool on = switchedOn("KESTREL_CUDA_ATTN");
    return on;
}

// G: query heads per block (the GQA group, padded; registers scale with it).
// KPS keys per warp step: their loads and reductions are independent, so a
// warp keeps 2 x KPS rows in flight instead of walking keys one latency at a time.
template <int EPL, int G>
__global__ void __launch_bounds__(kAttnWarps * 32, EPL >= 8 ? 2 : EPL == 4 ? (G == 4 ? 4 : 3) : 5)
    attnSplitKernel(const float* __restrict__ q, const int32_t* __restrict__ positions, KvDev kv, AttentionDev p,
                    float* __restrict__ scratchO, float2* __restrict__ scratchML) {
    constexpr int KPS = EPL >= 8 ? 2 : 4;
    pdlEnter();
    const int t = blockIdx.z;
    const int group = p.heads / p.kvHeads;
    const int chunks = (group + G - 1) / G;
    const int kvh = blockIdx.x / chunks;
    const int h0 = kvh * group + (blockIdx.x % chunks) * G;
    const int ng = min(G, kvh * group + group - h0);
    const int pos = positions[t];
    const Range r = visibleRange(pos, p);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int d = p.headDim, c0 = lane * EPL;
    // The block takes ranges blockIdx.y, + gridDim.y, ... (oneTokenBlocksY: a shallow
    // context has few active ranges, and blocks with none cost a launch each).
    for (int split = blockIdx.y; split < r.active; split += gridDim.y) {
        const int64_t start = r.first + split * r.splitLen;
        const int64_t end = min(start + r.splitLen, static_cast<int64_t>(pos) + 1);

        float qr[G][EPL];
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
            for (int e = 0; e < EPL; ++e)
                qr[g][e] = (g < ng && c0 + e < d) ? q[(static_cast<int64_t>(t) * p.heads + h0 + g) * d + c0 + e] * p.scale : 0.0f;
        float m[G], l[G], acc[G][EPL];
#pragma unroll
        for (int g = 0; g < G; ++g) {
            m[g] = -INFINITY;
            l[g] = 0.0f;
#pragma unroll
            for (int e = 0; e < EPL; ++e) acc[g][e] = 0.0f;
        }
        const int64_t headOff = static_cast<int64_t>(kvh) * d;
        const int32_t* table = kvTableOf(kv, t);
        for (int64_t j = start + warp; j < end; j += KPS * kAttnWarps) {
            float kk[KPS][EPL], vv[KPS][EPL];
            bool has[KPS];
            loadKeys<KPS, EPL, int64_t>(kv, kv.k, kv.v, table, j, kAttnWarps, end, headOff, c0, d, kk, vv, has);
            onlineSoftmaxStep<G, KPS, EPL>(qr, kk, vv, has, ng, p.softcap, m, l, acc);
        }
        // Merge the warps of the block.
        __shared__ float sm[kAttnWarps][G], sl[kAttnWarps][G];
        __shared__ float so[kAttnWarps][G][EPL * 32];
#pragma unroll
        for (int g = 0; g < G; ++g) {
            if (lane == 0) {
                sm[warp][g] = m[g];
                sl[warp][g] = l[g];
            }
#pragma unroll
            for (int e = 0; e < EPL; ++e) so[warp][g][c0 + e] = acc[g][e];
        }
        __syncthreads();
        writeSplitPartial(sm, sl, so, ng, d, (static_cast<int64_t>(t) * p.heads + h0) * p.maxSplits, p.maxSplits, split,
                          scratchO, scratchML);
        __syncthreads();  // the next range reuses sm, sl, so
    }
}

// Pass 1 for an F16 cache with headDim = 8 * LPK (64, 128, 256): LPK lanes
// hold one key row in 16-byte loads, so a warp walks 32 / LPK keys at once
// (a sub-warp each, its own online softmax), KPS of them per step: a block
// has 4 * (32 / LPK) * KPS rows of K and V in flight. With one token the
// first step's keys before the token's own position are loaded before
// pdlWait(): only position `pos` is written by this step (the KV-write kernel
// before this one), and positions and block tables are uploaded before the
// step's first kernel, so this overlaps the previous kernel's tail.
template <int LPK, int G, int KPS>
__global__ void __launch_bounds__(kAttnWarps * 32, G == 8 ? 2 : 3)
    attnSplitWideKernel(const float* __restrict__ q, const int32_t* __restrict__ positions, KvDev kv, AttentionDev p,
                        float* __restrict__ scratchO, float2* __restrict__ scratchML) {
    constexpr int SUB = 32 / LPK;            // key streams per warp
    constexpr int STREAMS = kAttnWarps * SUB;
    constexpr int D = LPK * 8;
    const int t = blockIdx.z;
    const int group = p.heads / p.kvHeads;
    const int chunks = (group + G - 1) / G;
    const int kvh = blockIdx.x / chunks;
    const int h0 = kvh * group + (blockIdx.x % chunks) * G;
    const int ng = min(G, kvh * group + group - h0);
    const int pos = positions[t];
    const Range r = visibleRange(pos, p);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int stream = warp * SUB + lane / LPK;
    const int c0 = (lane % LPK) * 8;
    const int64_t headOff = static_cast<int64_t>(kvh) * D + c0;
    const int32_t* table = kvTableOf(kv, t);
    const __half* kBase = static_cast<const __half*>(kv.k);
    const __half* vBase = static_cast<const __half*>(kv.v);
    // Ranges blockIdx.y, + gridDim.y, ... (see attnSplitKernel). Split 0 is always
    // active: every launch has blocks that wait.
    for (int split = blockIdx.y, pass = 0; split < r.active; split += gridDim.y, ++pass) {
        const int64_t start = r.first + split * r.splitLen;
        const int64_t end = min(start + r.splitLen, static_cast<int64_t>(pos) + 1);
        const bool early = (gridDim.z == 1 || t < p.distinctRows) && pass == 0;

        uint4 kr[KPS], vr[KPS];
        bool has[KPS];
#pragma unroll
        for (int u = 0; u < KPS; ++u) {
            const int64_t j = start + u * STREAMS + stream;
            has[u] = j < end;
            kr[u] = vr[u] = make_uint4(0, 0, 0, 0);
            if (has[u] && early && j < pos) {
                const int64_t off = kvRowOffset(kv, table, j) + headOff;
                kr[u] = *reinterpret_cast<const uint4*>(kBase + off);
                vr[u] = *reinterpret_cast<const uint4*>(vBase + off);
            }
        }
        if (pass == 0) {
            pdlEnter();
        }
#pragma unroll
        for (int u = 0; u < KPS; ++u) {
            const int64_t j = start + u * STREAMS + stream;
            if (has[u] && !(early && j < pos)) {
                const int64_t off = kvRowOffset(kv, table, j) + headOff;
                kr[u] = *reinterpret_cast<const uint4*>(kBase + off);
                vr[u] = *reinterpret_cast<const uint4*>(vBase + off);
            }
        }
        float qr[G][8];
        loadScaledQueries<G, D>(q, t, p.heads, h0, ng, c0, p.scale, qr);
        float m[G], l[G], acc[G][8];
#pragma unroll
        for (int g = 0; g < G; ++g) {
            m[g] = -INFINITY;
            l[g] = 0.0f;
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[g][e] = 0.0f;
        }
        for (int64_t jb = start;;) {
            // K and V stay as halves in registers and are widened where used.
            foldHalfKeys<G, KPS, LPK>(qr, kr, vr, has, p.softcap, m, l, acc);
            jb += STREAMS * KPS;
            if (jb >= end) break;
#pragma unroll
            for (int u = 0; u < KPS; ++u) {
                const int64_t j = jb + u * STREAMS + stream;
                has[u] = j < end;
                if (has[u]) {
                    const int64_t off = kvRowOffset(kv, table, j) + headOff;
                    kr[u] = *reinterpret_cast<const uint4*>(kBase + off);
                    vr[u] = *reinterpret_cast<const uint4*>(vBase + off);
                }
            }
        }
        // Merge the block's key streams.
        __shared__ float sm[STREAMS][G], sl[STREAMS][G];
        __shared__ float so[STREAMS][G][D];
        finishRange<STREAMS, G, D, LPK>(sm, sl, so, stream, lane, c0, m, l, acc, ng,
                                        (static_cast<int64_t>(t) * p.heads + h0) * p.maxSplits, p.maxSplits, split,
                                        scratchO, scratchML);
    }
}

// Pass 2, one block per (head, token): warp w merges splits w, w + 8, ...
// (independent loads, so a deep context's 128 splits cost a few latencies, not
// 128), then the warps merge through shared memory. NC = columns per lane.
constexpr int kCombineWarps = 8;

template <int NC>
__global__ void __launch_bounds__(kCombineWarps * 32)
    attnCombineKernel(const int32_t* __restrict__ positions, AttentionDev p, const float* __restrict__ scratchO,
                      const float2* __restrict__ scratchML, float* __restrict__ out, int8_t* q8, float2* q8meta) {
    const int h = blockIdx.x, t = blockIdx.y;
    // Positions are uploaded before the step's first kernel: read before the wait, so the
    // first load after it is the partials'.
    const int64_t active = activeSplits(t, positions[t], p);
    pdlEnter();
    const int d = p.headDim;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t slot0 = (static_cast<int64_t>(t) * p.heads + h) * p.maxSplits;
    // One pass with online rescaling: a range's (max, sum) and output row are loaded together
    // (one round trip per range, not one for the maxima and another for the rows).
    float mw = -INFINITY, lw = 0.0f, ow[NC];
#pragma unroll
    for (int i = 0; i < NC; ++i) ow[i] = 0.0f;
#pragma unroll 4
    for (int s = warp; s < active; s += kCombineWarps) {
        const float2 ml = scratchML[slot0 + s];
        float o[NC];
#pragma unroll
        for (int i = 0; i < NC; ++i) {
            const int c = lane + 32 * i;
            o[i] = c < d ? scratchO[(slot0 + s) * d + c] : 0.0f;
        }
        if (ml.x == -INFINITY) continue;  // a range without keys adds nothing
        const float mNew = fmaxf(mw, ml.x);
        const float keep = __expf(mw - mNew), add = __expf(ml.x - mNew);  // keep = 0 while mw = -inf
        lw = lw * keep + ml.y * add;
#pragma unroll
        for (int i = 0; i < NC; ++i) ow[i] = ow[i] * keep + o[i] * add;
        mw = mNew;
    }
    __shared__ float sm[kCombineWarps], sl[kCombineWarps];
    __shared__ float so[kCombineWarps][NC * 32];
    if (lane == 0) {
        sm[warp] = mw;
        sl[warp] = lw;
    }
#pragma unroll
    for (int i = 0; i < NC; ++i) so[warp][lane + 32 * i] = ow[i];
    __syncthreads();
    float mm = -INFINITY;
#pragma unroll
    for (int w = 0; w < kCombineWarps; ++w) mm = fmaxf(mm, sm[w]);
    float fw[kCombineWarps], ll = 0.0f;
#pragma unroll
    for (int w = 0; w < kCombineWarps; ++w) {
        fw[w] = sm[w] == -INFINITY ? 0.0f : __expf(sm[w] - mm);
        ll += sl[w] * fw[w];
    }
    // Every thread of a warp walks the padded columns together so the shuffles below see full warps.
    const int dPad = (d + 31) / 32 * 32;
    for (int c = threadIdx.x; c < dPad; c += blockDim.x) {
        float v = 0.0f;
        if (c < d) {
            float o = 0.0f;
#pragma unroll
            for (int w = 0; w < kCombineWarps; ++w) o += so[w][c] * fw[w];
            v = ll > 0.0f ? o / ll : 0.0f;
        }
        // q8 is set only when d % 32 == 0: then one warp is one quant block.
        storeAttentionOut(v, c < d, static_cast<int64_t>(t) * p.heads + h, d, c, out, q8, q8meta);
    }
}

int queryHeadsPerBlock(const AttentionDev& p) { return p.heads / p.kvHeads <= 4 ? 4 : kMaxGroup; }

// Blocks per (token, kv head, query-head chunk) of pass 1: about two blocks per SM in all,
// enough for one token's deep context, while 16 tokens at a shallow depth do not launch
// 64 mostly idle ranges each. The tensor-core kernel (mma) holds 2 blocks per SM, so its
// count is rounded down to one wave: rounded up, 16 tokens of llama3-8b took 384 blocks
// (1.45 waves) and measured 2 % slower than the key-stream kernel, which holds 3 per SM.
int64_t oneTokenBlocksY(const AttentionDev& p, int64_t tokens, bool mma) {
    const int gpb = queryHeadsPerBlock(p);
    const int64_t pairs = static_cast<int64_t>(p.kvHeads) * ((p.heads / p.kvHeads + gpb - 1) / gpb) * tokens;
    const int64_t slots = 2 * smCount();
    return std::clamp<int64_t>(mma ? slots / pairs : (slots + pairs - 1) / pairs, 1, p.maxSplits);
}

// The F16 kernel with the whole GQA group in one block up to 4 heads (its fold runs every
// head of G: a padded head would be work for nothing), else chunks of 8. The grid is the
// same as for 4: one chunk per kv head.
template <int LPK, int KPS>
void launchWide(int group, dim3 grid, dim3 block, cudaStream_t stream, const float* q, const int32_t* positions,
                const KvDev& kv, const AttentionDev& p, float* scratchO, float2* scratchML) {
    const auto go = [&](auto kernel) { launchK(kernel, grid, block, stream, q, positions, kv, p, scratchO, scratchML); };
    switch (group) {
        case 1: go(attnSplitWideKernel<LPK, 1, KPS>); break;
        case 2: go(attnSplitWideKernel<LPK, 2, KPS>); break;
        case 3: go(attnSplitWideKernel<LPK, 3, KPS>); break;
        case 4: go(attnSplitWideKernel<LPK, 4, KPS>); break;
        default: go(attnSplitWideKernel<LPK, kMaxGroup, KPS>);
    }
}

// Whether a short context is faster walked whole (one block per (token, kv head),
// no combine kernel) than split into ranges. Measured on an H200 at depth 0-256
// (docs/PERFORMANCE.md, thirty-second session): smollm2 (head size 64, 3 blocks
// for one token) 457 -> 435 us a step; llama3-8b (head size 128) one token, 8
// blocks: 1716 -> 1755 us, slower (reasoned, not profiled: a block of 211 registers
// x 256 threads waits for an SM that the Q,K,V GEMV has left entirely, so its early
// key loads start late, and 8 SMs walk all the keys); its 16 streams, 128 blocks:
// 4657-4667 -> 4767-4772 tok/s, faster. So: heads of 64, or at least half as many
// blocks as SMs. KESTREL_CUDA_ATTN_WHOLE_FORCE=1: wherever it applies (so that the
// op checks' few-token steps run the head-size-128 kernels too).
bool wholePays(const AttentionDev& p, int64_t tokens) {
    static const bool force = [] {
        const char* v = std::getenv("KESTREL_CUDA_ATTN_WHOLE_FORCE");
        return v && *v && std::atoi(v) != 0;
    }();
    return force || p.headDim <= 64 || static_cast<int64_t>(p.kvHeads) * tokens * 2 >= smCount();
}

// Pass 1 of the one-token kernels for tokens [0, tokens), blocksY blocks per (token, chunk).
void launchOneTokenPass(const float* q, int64_t tokens, const int32_t* positions, const KvDev& kv,
                        const AttentionDev& p, int64_t blocksY, bool mma, float* scratchO, float2* scratchML,
                        cudaStream_t stream) {
    if (mma) {  // one chunk per kv head: the same grid as below
        launchAttentionMma(q, tokens, positions, kv, p, blocksY, scratchO, scratchML, stream);
        return;
    }
    const int gpb = queryHeadsPerBlock(p);
    const int chunks = (p.heads / p.kvHeads + gpb - 1) / gpb;
    const dim3 grid(static_cast<unsigned>(p.kvHeads * chunks), static_cast<unsigned>(blocksY),
                    static_cast<unsigned>(tokens));
    const dim3 block(kAttnWarps * 32);
    const auto aligned = [](const void* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15) == 0; };
    if (wideAttentionEnabled() && kv.f16 && (p.headDim == 64 || p.headDim == 128 || p.headDim == 256) &&
        kv.rowStride % 8 == 0 && aligned(kv.k) && aligned(kv.v) && aligned(q)) {
        const int group = p.heads / p.kvHeads;
        if (p.headDim == 64) launchWide<8, 2>(group, grid, block, stream, q, positions, kv, p, scratchO, scratchML);
        else if (p.headDim == 128) launchWide<16, 4>(group, grid, block, stream, q, positions, kv, p, scratchO, scratchML);
        else launchWide<32, 4>(group, grid, block, stream, q, positions, kv, p, scratchO, scratchML);
    } else {
#define KESTREL_ATTN(EPL)                                                                                          \
    (gpb == 4 ? launchK(attnSplitKernel<EPL, 4>, grid, block, stream, q, positions, kv, p, scratchO, scratchML)     \
              : launchK(attnSplitKernel<EPL, kMaxGroup>, grid, block, stream, q, positions, kv, p, scratchO, scratchML))
    if (p.headDim <= 32) KESTREL_ATTN(1);
    else if (p.headDim <= 64) KESTREL_ATTN(2);
    else if (p.headDim <= 128) KESTREL_ATTN(4);
    else KESTREL_ATTN(8);
#undef KESTREL_ATTN
    }
}

}  // namespace

int64_t attentionScratchFloats(const AttentionDev& p, int64_t tokens) {
    return tokens * p.heads * p.maxSplits * (static_cast<int64_t>(p.headDim) + 2);
}

void launchAttention(const float* q, int64_t tokens, const int32_t* positions, KvDev kv, const AttentionDev& params,
                     float* scratch, float* out, int8_t* q8, float2* q8meta, cudaStream_t stream) {
    if (tokens == 0) return;
    static const int deepKeys = [] {
        const char* v = std::getenv("KESTREL_CUDA_ATTN_DEEP");
        return v && *v ? std::atoi(v) : kDeepSplitKeys;
    }();
    AttentionDev p = params;
    p.deepSplitKeys = deepKeys;
    if (p.tileKeys > 0 && (p.tileFrom >= tokens || !attentionTileFits(kv, p, q))) p.tileKeys = 0;
    float* scratchO = scratch;
    auto* scratchML = reinterpret_cast<float2*>(scratch + tokens * p.heads * p.maxSplits * p.headDim);
    // Tokens before tileFrom (the step's decode rows) take the one-token kernels, the rest the tile kernel.
    const int64_t oneTokenRows = p.tileKeys > 0 ? p.tileFrom : tokens;
    // One range per pass-1 block (KESTREL_CUDA_ATTN_CAP=0: maxSplits ranges, to compare).
    static const bool capRanges = switchedOn("KESTREL_CUDA_ATTN_CAP");
    if (p.headDim % 32 != 0) q8 = nullptr;
    // Multi-head attention (no group for the tensor-core kernel) keeps the split: a whole
    // walk on the key-stream kernel (16 warps a block) measured llama2-7b 1623 -> 1642 us a step.
    if (p.whole && oneTokenRows == tokens && wholePays(p, tokens) && attentionMmaFits(kv, p, q)) {
        launchAttentionMmaWhole(q, tokens, positions, kv, p, out, q8, q8meta, stream);
        return;
    }
    if (oneTokenRows > 0) {
        const bool mma = attentionMmaFits(kv, p, q);
        const int64_t blocksY = oneTokenBlocksY(p, oneTokenRows, mma);
        if (capRanges) p.rangeCap = static_cast<int>(blocksY);
        launchOneTokenPass(q, oneTokenRows, positions, kv, p, blocksY, mma, scratchO, scratchML, stream);
    }
    if (p.tileKeys > 0) launchAttentionTile(q, tokens, positions, kv, p, scratchO, scratchML, stream);
    const dim3 cgrid(static_cast<unsigned>(p.heads), static_cast<unsigned>(tokens)), cblock(kCombineWarps * 32);
    if (p.headDim <= 32) launchK(attnCombineKernel<1>, cgrid, cblock, stream, positions, p, scratchO, scratchML, out, q8, q8meta);
    else if (p.headDim <= 64) launchK(attnCombineKernel<2>, cgrid, cblock, stream, positions, p, scratchO, scratchML, out, q8, q8meta);
    else if (p.headDim <= 128) launchK(attnCombineKernel<4>, cgrid, cblock, stream, positions, p, scratchO, scratchML, out, q8, q8meta);
    else launchK(attnCombineKernel<8>, cgrid, cblock, stream, positions, p, scratchO, scratchML, out, q8, q8meta);
}

}  // namespace kestrel::cuda
