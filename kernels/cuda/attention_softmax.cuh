// One step of flash-decoding's online softmax, shared by the one-token
// attention kernel (attention.cu) and the persistent decode step
// (decode_step.cu). Included by .cu files only.
#pragma once

#include "cuda_common.cuh"

namespace kestrel::cuda {

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
        float mNew = m[g];
#pragma unroll
        for (int u = 0; u < KPS; ++u) {
            if (softcap > 0.0f) sc[u] = softcap * tanhf(sc[u] / softcap);
            if (!has[u]) sc[u] = -INFINITY;
            mNew = fmaxf(mNew, sc[u]);
        }
        const float corr = __expf(m[g] - mNew);
        float wsum = 0.0f;
        float wu[KPS];
#pragma unroll
        for (int u = 0; u < KPS; ++u) {
            wu[u] = has[u] ? __expf(sc[u] - mNew) : 0.0f;
            wsum += wu[u];
        }
        l[g] = l[g] * corr + wsum;
#pragma unroll
        for (int e = 0; e < EPL; ++e) {
            float a = acc[g][e] * corr;
#pragma unroll
            for (int u = 0; u < KPS; ++u) a += wu[u] * vv[u][e];
            acc[g][e] = a;
        }
        m[g] = mNew;
    }
}

}  // namespace kestrel::cuda
