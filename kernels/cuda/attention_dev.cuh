// Device code shared by the one-token attention kernels (attention.cu) and
// the persistent decode step (decode_step.cu): loading
// a lane's share of KV rows, one step of flash-decoding's online softmax, and
// the end of pass 1 (a block's partial states merged into its range's slot).
// Included by .cu files only.
#pragma once

#include "cuda_common.cuh"
#include "ops.cuh"

namespace kestrel::cuda {

// EPL values of a K or V row from element off + c0 of the slab `base`, as
// floats (zeros past d, the head size).
template <int EPL>
__device__ __forceinline__ void loadRow(const KvDev& kv, const void* base, int64_t off, int c0, int d, float (&out)[EPL]) {
    if (kv.f16) {
        const __half* h = static_cast<const __half*>(base) + off + c0;
        if (c0 + EPL <= d) {
            if constexpr (EPL == 8) {
                const uint4 raw = *reinterpret_cast<const uint4*>(h);
                const __half2* h2 = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const float2 f = __half22float2(h2[i]);
                    out[2 * i] = f.x;
                    out[2 * i + 1] = f.y;
                }
            } else if constexpr (EPL == 4) {
                const uint2 raw = *reinterpret_cast<const uint2*>(h);
                const __half2* h2 = reinterpret_cast<const __half2*>(&raw);
                const float2 a = __half22float2(h2[0]), b = __half22float2(h2[1]);
                out[0] = a.x; out[1] = a.y; out[2] = b.x; out[3] = b.y;
            } else if constexpr (EPL == 2) {
                const float2 a = __half22float2(*reinterpret_cast<const __half2*>(h));
                out[0] = a.x; out[1] = a.y;
            } else {
                out[0] = __half2float(h[0]);
            }
        } else {
#pragma unroll
            for (int e = 0; e < EPL; ++e) out[e] = c0 + e < d ? __half2float(h[e]) : 0.0f;
        }
    } else {
        const float* f = static_cast<const float*>(base) + off + c0;
#pragma unroll
        for (int e = 0; e < EPL; ++e) out[e] = c0 + e < d ? f[e] : 0.0f;
    }
}

// The K and V rows of the KPS keys j, j + stride, ... of one head (headOff: the
// head's first element in a row). has[u]: key u is before `end`; a missing key
// re-reads key j (in bounds; its values are masked by has). I: the index type.
template <int KPS, int EPL, typename I>
__device__ __forceinline__ void loadKeys(const KvDev& kv, const void* kBase, const void* vBase, const int32_t* table,
                                         I j, I stride, I end, int64_t headOff, int c0, int d, float (&kk)[KPS][EPL],
                                         float (&vv)[KPS][EPL], bool (&has)[KPS]) {
#pragma unroll
    for (int u = 0; u < KPS; ++u) {
        const I ju = j + u * stride;
        has[u] = ju < end;
        const int64_t row = kvRowOffset(kv, table, has[u] ? ju : j) + headOff;
        loadRow<EPL>(kv, kBase, row, c0, d, kk[u]);
        loadRow<EPL>(kv, vBase, row, c0, d, vv[u]);
    }
}

// One online-softmax update with KPS new scores: caps them (softcap > 0), masks
// the missing keys, moves the running max m and weight sum l on, and returns the
// factor the old state is rescaled by; wu gets each key's weight.
template <int KPS>
__device__ __forceinline__ float softmaxUpdate(float (&sc)[KPS], const bool (&has)[KPS], float softcap, float& m,
                                               float& l, float (&wu)[KPS]) {
    float mNew = m;
#pragma unroll
    for (int u = 0; u < KPS; ++u) {
        if (softcap > 0.0f) sc[u] = softcap * tanhf(sc[u] / softcap);
        if (!has[u]) sc[u] = -INFINITY;
        mNew = fmaxf(mNew, sc[u]);
    }
    // mNew is -inf only while no key has been seen: nothing to rescale yet.
    const float corr = mNew == -INFINITY ? 1.0f : __expf(m - mNew);
    float wsum = 0.0f;
#pragma unroll
    for (int u = 0; u < KPS; ++u) {
        wu[u] = has[u] ? __expf(sc[u] - mNew) : 0.0f;
        wsum += wu[u];
    }
    l = l * corr + wsum;
    m = mNew;
    return corr;
}

// A warp folds KPS keys into the running softmax state of each of its first
// ng (<= G) query heads. Each lane holds EPL values of every row: the scaled
// queries qr, the keys kk and values vv; has[u] says whether key u exists.
// m, l and acc are the running max, sum of weights and weighted value sum.
// softcap > 0 caps the scores as cap * tanh(score / cap).
template <int G, int KPS, int EPL>
__device__ __forceinline__ void onlineSoftmaxStep(const float (&qr)[G][EPL], const float (&kk)[KPS][EPL],
                                                  const float (&vv)[KPS][EPL], const bool (&has)[KPS], int ng,
                                                  float softcap, float (&m)[G], float (&l)[G], float (&acc)[G][EPL]) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
        if (g >= ng) break;
        float sc[KPS];
#pragma unroll
        for (int u = 0; u < KPS; ++u) {
            float sum = 0.0f;
#pragma unroll
            for (int e = 0; e < EPL; ++e) sum += qr[g][e] * kk[u][e];
            sc[u] = sum;
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
#pragma unroll
            for (int u = 0; u < KPS; ++u) sc[u] += __shfl_xor_sync(0xffffffffu, sc[u], o);
        float wu[KPS];
        const float corr = softmaxUpdate<KPS>(sc, has, softcap, m[g], l[g], wu);
#pragma unroll
        for (int e = 0; e < EPL; ++e) {
            float a = acc[g][e] * corr;
#pragma unroll
            for (int u = 0; u < KPS; ++u) a += wu[u] * vv[u][e];
            acc[g][e] = a;
        }
    }
}

// Warps per block of the one-token pass-1 kernels.
constexpr int kAttnWarps = 4;

// The end of pass 1 in the split kernels: the block's NS partial softmax
// states (max, sum, output; one per warp or key stream, in shared memory)
// merged into the split's slot of the scratch. Slot of query head h0 + g:
// slot0 + g * nsplit + split. Call after a __syncthreads.
template <int NS, int G, int CS>
__device__ __forceinline__ void writeSplitPartial(const float (&sm)[NS][G], const float (&sl)[NS][G],
                                                  const float (&so)[NS][G][CS], int ng, int d, int64_t slot0,
                                                  int nsplit, int split, float* __restrict__ scratchO,
                                                  float2* __restrict__ scratchML) {
    for (int idx = threadIdx.x; idx < ng * d; idx += blockDim.x) {
        const int g = idx / d, c = idx % d;
        float mm = -INFINITY;
        for (int w = 0; w < NS; ++w) mm = fmaxf(mm, sm[w][g]);
        float ll = 0.0f, o = 0.0f;
        for (int w = 0; w < NS; ++w) {
            const float f = sm[w][g] == -INFINITY ? 0.0f : __expf(sm[w][g] - mm);
            ll += sl[w][g] * f;
            o += so[w][g][c] * f;
        }
        const int64_t slot = slot0 + static_cast<int64_t>(g) * nsplit + split;
        scratchO[slot * d + c] = o;
        if (c == 0) scratchML[slot] = make_float2(mm, ll);
    }
}

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
// the caller may reuse them (and anything aliasing them) afterwards.
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

}  // namespace kestrel::cuda
