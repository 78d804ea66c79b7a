// Device code shared by the one-token attention kernels (attention.cu,
// attention_mma.cu) and the
// persistent decode step (decode_step.cu): loading a lane's share of KV rows,
// and one step of flash-decoding's online softmax. Included by .cu files only.
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

// The block's NS softmax states of ng query rows (max, sum, output; one per
// warp or key stream, in shared memory) merged, one (row g, column c) a thread
// at a time: emit(g, c, max, sum, output). Call after a __syncthreads.
template <int NS, int G, int CS, typename Emit>
__device__ __forceinline__ void mergeBlockStates(const float (&sm)[NS][G], const float (&sl)[NS][G],
                                                 const float (&so)[NS][G][CS], int ng, int d, Emit emit) {
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
        emit(g, c, mm, ll, o);
    }
}

// The end of pass 1 in the split kernels: the block's partial state merged
// into the split's slot of the scratch. Slot of query head h0 + g:
// slot0 + g * nsplit + split. Call after a __syncthreads.
template <int NS, int G, int CS>
__device__ __forceinline__ void writeSplitPartial(const float (&sm)[NS][G], const float (&sl)[NS][G],
                                                  const float (&so)[NS][G][CS], int ng, int d, int64_t slot0,
                                                  int nsplit, int split, float* __restrict__ scratchO,
                                                  float2* __restrict__ scratchML) {
    mergeBlockStates(sm, sl, so, ng, d, [&](int g, int c, float mm, float ll, float o) {
        const int64_t slot = slot0 + static_cast<int64_t>(g) * nsplit + split;
        scratchO[slot * d + c] = o;
        if (c == 0) scratchML[slot] = make_float2(mm, ll);
    });
}

// One value of attention's final output, column c of row `row` (head-major:
// row * d + c), and, when q8 is set (d % 32 == 0, all 32 lanes of the warp
// holding columns 32 k .. 32 k + 31 of the row), its int8 quant block for the
// next GEMV. Shared by the combine kernel and the whole-context pass 1.
__device__ __forceinline__ void storeAttentionOut(float v, bool real, int64_t row, int d, int c, float* __restrict__ out,
                                                  int8_t* __restrict__ q8, float2* __restrict__ q8meta) {
    const int64_t i = row * d + c;
    if (real) out[i] = v;
    if (q8) {
        const float amax = warpMax(fabsf(v));
        const float dq = amax / 127.0f;
        const int qv = __float2int_rn(dq > 0.0f ? v / dq : 0.0f);
        const int sum = static_cast<int>(warpSum(static_cast<float>(qv)));
        q8[i] = static_cast<int8_t>(qv);
        if ((threadIdx.x & 31) == 0) q8meta[i / 32] = make_float2(dq, dq * static_cast<float>(sum));
    }
}

// The end of a whole-context pass 1: the block's states merged and normalised
// into the output rows row0 .. row0 + ng - 1 (and their int8 form). d % 32 == 0,
// so a warp's 32 columns are one quant block. Call after a __syncthreads.
template <int NS, int G, int CS>
__device__ __forceinline__ void writeWholeOutput(const float (&sm)[NS][G], const float (&sl)[NS][G],
                                                 const float (&so)[NS][G][CS], int ng, int d, int64_t row0,
                                                 float* __restrict__ out, int8_t* __restrict__ q8,
                                                 float2* __restrict__ q8meta) {
    mergeBlockStates(sm, sl, so, ng, d, [&](int g, int c, float, float ll, float o) {
        storeAttentionOut(ll > 0.0f ? o / ll : 0.0f, true, row0 + g, d, c, out, q8, q8meta);
    });
}

}  // namespace kestrel::cuda
