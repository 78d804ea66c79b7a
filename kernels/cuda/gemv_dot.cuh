// Device code shared by the GEMV kernels (gemv.cu, gemv_rope.cu): per-lane
// dot products of weight rows with int8 activations. Included by .cu files only.
//
// One warp per output row (or pair of rows); each lane walks the row's
// 32-blocks with a stride of 32 blocks, so one warp-wide step reads 32
// consecutive blocks (512 bytes of Q4_0 quants) in 16-byte loads.
#pragma once

#include "cuda_common.cuh"
#include "gemv.cuh"

namespace kestrel::cuda::gemvdev {

constexpr int kWarpsPerBlock = 8;

__device__ __forceinline__ int dotQ4(uint4 w, int4 a0, int4 a1) {
    const int m = 0x0f0f0f0f;
    int s = __dp4a(static_cast<int>(w.x & m), a0.x, 0);
    s = __dp4a(static_cast<int>(w.y & m), a0.y, s);
    s = __dp4a(static_cast<int>(w.z & m), a0.z, s);
    s = __dp4a(static_cast<int>(w.w & m), a0.w, s);
    s = __dp4a(static_cast<int>((w.x >> 4) & m), a1.x, s);
    s = __dp4a(static_cast<int>((w.y >> 4) & m), a1.y, s);
    s = __dp4a(static_cast<int>((w.z >> 4) & m), a1.z, s);
    s = __dp4a(static_cast<int>((w.w >> 4) & m), a1.w, s);
    return s;
}

// 16 int8 weights with 16 int8 activations.
__device__ __forceinline__ int dot16(uint4 w, int4 a, int s = 0) {
    s = __dp4a(static_cast<int>(w.x), a.x, s);
    s = __dp4a(static_cast<int>(w.y), a.y, s);
    s = __dp4a(static_cast<int>(w.z), a.z, s);
    return __dp4a(static_cast<int>(w.w), a.w, s);
}

__device__ __forceinline__ int dotQ8(uint4 w0, uint4 w1, int4 a0, int4 a1) { return dot16(w1, a1, dot16(w0, a0)); }

// Integer formats, M (1 or 2) rows sharing the activation: row ra of wa and
// (M == 2) row rb of wb, which may be the same matrix. All weight loads of a
// chunk (for every row) are issued before the first is used, so a warp keeps
// M x 2 KB in flight. The first chunk's weight loads are issued before
// pdlWait(): weights do not depend on the previous kernel. acc[mi][t] gets
// this lane's partial (the caller reduces the warp).
template <DevFormat F, int NT, int M, int CH>
__device__ __forceinline__ void rowDotInt(const DevMatrix& wa, int64_t ra, const DevMatrix& wb, int64_t rb, Q8Act xq,
                                          int64_t t0, int ntok, int lane, float (*acc)[NT]) {
    const int64_t cols = wa.cols;
    const int64_t nb = cols / 32;
    constexpr int kChunk = CH;
    bool waited = false;
    for (int64_t b0 = lane; b0 < nb || !waited; b0 += 32 * kChunk) {
        uint4 w0[M][kChunk], w1[M][kChunk];
        float d[M][kChunk], m[M][kChunk], d1[M][kChunk];  // d1: Q8_16's scale of values 16-31
#pragma unroll
        for (int mi = 0; mi < M; ++mi) {
            const DevMatrix& w = mi == 0 ? wa : wb;
            const int64_t r = mi == 0 ? ra : rb;
#pragma unroll
            for (int u = 0; u < kChunk; ++u) {
                const int64_t b = b0 + 32 * u;
                w1[mi][u] = make_uint4(0, 0, 0, 0);
                w0[mi][u] = make_uint4(0, 0, 0, 0);
                m[mi][u] = 0.0f;
                d[mi][u] = 0.0f;
                d1[mi][u] = 0.0f;
                if (b < nb) {
                    if constexpr (F == DevFormat::Q8_0 || F == DevFormat::Q8_16) {
                        const uint4* p = static_cast<const uint4*>(w.qs) + (r * nb + b) * 2;
                        w0[mi][u] = __ldg(p);
                        w1[mi][u] = __ldg(p + 1);
                        if constexpr (F == DevFormat::Q8_16) {
                            const uint2 raw = __ldg(static_cast<const uint2*>(w.scales) + r * nb + b);
                            const float2 dd = __half22float2(*reinterpret_cast<const __half2*>(&raw.x));
                            d[mi][u] = dd.x;
                            d1[mi][u] = dd.y;
                            m[mi][u] = __low2float(*reinterpret_cast<const __half2*>(&raw.y));
                        } else {
                            d[mi][u] = __half2float(static_cast<const __half*>(w.scales)[r * nb + b]);
                        }
                    } else {
                        w0[mi][u] = __ldg(static_cast<const uint4*>(w.qs) + r * nb + b);
                        if constexpr (F == DevFormat::Q4_1) {
                            const float2 dm = __half22float2(static_cast<const __half2*>(w.scales)[r * nb + b]);
                            d[mi][u] = dm.x;
                            m[mi][u] = dm.y;
                        } else {
                            d[mi][u] = __half2float(static_cast<const __half*>(w.scales)[r * nb + b]);
                        }
                    }
                }
            }
        }
        if (!waited) {
            pdlWait();
            waited = true;
            if (b0 >= nb) break;
        }
#pragma unroll
        for (int u = 0; u < kChunk; ++u) {
            const int64_t b = b0 + 32 * u;
            if (b >= nb) break;
#pragma unroll
            for (int t = 0; t < NT; ++t) {
                if (t < ntok) {
                    const int4* ap = reinterpret_cast<const int4*>(xq.q + (t0 + t) * cols + b * 32);
                    const int4 a0 = ap[0], a1 = ap[1];
                    const float2 am = xq.meta[(t0 + t) * nb + b];
#pragma unroll
                    for (int mi = 0; mi < M; ++mi) {
                        if constexpr (F == DevFormat::Q4_0) {
                            acc[mi][t] += d[mi][u] * (am.x * static_cast<float>(dotQ4(w0[mi][u], a0, a1)) - 8.0f * am.y);
                        } else if constexpr (F == DevFormat::Q4_1) {
                            acc[mi][t] += d[mi][u] * am.x * static_cast<float>(dotQ4(w0[mi][u], a0, a1)) + m[mi][u] * am.y;
                        } else if constexpr (F == DevFormat::Q8_16) {
                            const float lo = d[mi][u] * static_cast<float>(dot16(w0[mi][u], a0));
                            const float hi = d1[mi][u] * static_cast<float>(dot16(w1[mi][u], a1));
                            acc[mi][t] += am.x * (lo + hi) + m[mi][u] * am.y;
                        } else {
                            acc[mi][t] += d[mi][u] * am.x * static_cast<float>(dotQ8(w0[mi][u], w1[mi][u], a0, a1));
                        }
                    }
                }
            }
        }
    }
}

}  // namespace kestrel::cuda::gemvdev
