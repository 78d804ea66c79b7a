// Device code shared by the GEMV kernels (gemv.cu, gemv_rope.cu): per-lane
// dot products of weight rows with int8 activations. Included by .cu files only.
//
// One warp per output row (or pair of rows); each lane walks the row's
// 32-blocks with a stride of 32 blocks, so one warp-wide step reads 32
// consecutive blocks (512 bytes of Q4_0 quants) in 16-byte loads.
#pragma once

#include "cuda_common.cuh"
#include "dev_format.cuh"
#include "gemv_act.cuh"

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

// One 32-value block of an integer-format weight row, as loaded: quants
// (w1: values 16-31 of the 8-bit formats), scale d (d1: Q8_16's scale of values
// 16-31) and min m. Unused members are dead code per format.
struct WBlock {
    uint4 w0, w1;
    float d, m, d1;
};

// A 16-byte weight load that does not allocate in L1: weights are read once per
// step, and the activations the dot products re-read should keep L1 to themselves.
__device__ __forceinline__ uint4 ldgStream(const void* p) {
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}
__device__ __forceinline__ uint2 ldgStream8(const void* p) {
    uint2 v;
    asm("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}
__device__ __forceinline__ uint32_t ldgStream4(const void* p) {
    uint32_t v;
    asm("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ uint16_t ldgStream2(const void* p) {
    uint16_t v;
    asm("ld.global.nc.L1::no_allocate.u16 %0, [%1];" : "=h"(v) : "l"(p));
    return v;
}

// Where a block's bytes are read from: global memory through the read-only
// cache, global memory bypassing L1 (streamed weights), or shared memory (the
// persistent decode step's staged chunks).
enum class Src { Cached, Stream, Shared };

// A T (uint4, uint2, uint32_t or uint16_t) read from where S says.
template <Src S, typename T>
__device__ __forceinline__ T loadAs(const void* p) {
    if constexpr (S == Src::Shared) return *static_cast<const T*>(p);
    else if constexpr (S == Src::Cached) return __ldg(static_cast<const T*>(p));
    else if constexpr (sizeof(T) == 16) return ldgStream(p);
    else if constexpr (sizeof(T) == 8) return ldgStream8(p);
    else if constexpr (sizeof(T) == 4) return ldgStream4(p);
    else return ldgStream2(p);
}

// Block b of the row whose quants start at q and scales at sc; zeros when `ok`
// is false, so a lane past the row's end adds nothing.
template <DevFormat F, Src S = Src::Cached>
__device__ __forceinline__ void loadBlockAt(WBlock& o, const uint8_t* q, const uint8_t* sc, int64_t b, bool ok) {
    o.w0 = o.w1 = make_uint4(0, 0, 0, 0);
    o.d = o.m = o.d1 = 0.0f;
    if (!ok) return;
    const uint8_t* qp = q + b * quantBytes<F>();
    const uint8_t* sp = sc + b * scaleBytes<F>();
    o.w0 = loadAs<S, uint4>(qp);
    if constexpr (F == DevFormat::Q8_0 || F == DevFormat::Q8_16) o.w1 = loadAs<S, uint4>(qp + 16);
    if constexpr (F == DevFormat::Q8_16) {
        const uint2 raw = loadAs<S, uint2>(sp);
        const float2 dd = __half22float2(*reinterpret_cast<const __half2*>(&raw.x));
        o.d = dd.x;
        o.d1 = dd.y;
        o.m = __low2float(*reinterpret_cast<const __half2*>(&raw.y));
    } else if constexpr (F == DevFormat::Q4_1) {
        const uint32_t raw = loadAs<S, uint32_t>(sp);
        const float2 dm = __half22float2(*reinterpret_cast<const __half2*>(&raw));
        o.d = dm.x;
        o.m = dm.y;
    } else {
        o.d = halfBits(loadAs<S, uint16_t>(sp));
    }
}

// Where row r of w starts: its quants and its scales.
template <DevFormat F>
__device__ __forceinline__ void rowStart(const DevMatrix& w, int64_t r, const uint8_t*& q, const uint8_t*& sc) {
    const int64_t first = r * (w.cols / 32);
    q = static_cast<const uint8_t*>(w.qs) + first * quantBytes<F>();
    sc = static_cast<const uint8_t*>(w.scales) + first * scaleBytes<F>();
}

// Block b of row r of w (see loadBlockAt).
template <DevFormat F>
__device__ __forceinline__ void loadBlock(WBlock& o, const DevMatrix& w, int64_t r, int64_t b, bool ok) {
    const uint8_t *q, *sc;
    rowStart<F>(w, r, q, sc);
    loadBlockAt<F>(o, q, sc, b, ok);
}

// The block's dot product with int8 activations a0 (values 0-15), a1 (16-31)
// whose quantisation meta is am = (scale, scale x sum of the quants).
template <DevFormat F>
__device__ __forceinline__ float dotBlock(const WBlock& w, int4 a0, int4 a1, float2 am) {
    if constexpr (F == DevFormat::Q4_0) {
        return w.d * (am.x * static_cast<float>(dotQ4(w.w0, a0, a1)) - 8.0f * am.y);
    } else if constexpr (F == DevFormat::Q4_1) {
        return w.d * am.x * static_cast<float>(dotQ4(w.w0, a0, a1)) + w.m * am.y;
    } else if constexpr (F == DevFormat::Q8_16) {
        const float lo = w.d * static_cast<float>(dot16(w.w0, a0));
        const float hi = w.d1 * static_cast<float>(dot16(w.w1, a1));
        return am.x * (lo + hi) + w.m * am.y;
    } else {
        return w.d * am.x * static_cast<float>(dotQ8(w.w0, w.w1, a0, a1));
    }
}

// Integer formats, M (1 or 2) rows sharing the activation: row ra of wa and
// (M == 2) row rb of wb, which may be the same matrix. All weight loads of a
// chunk (for every row) are issued before the first is used, so a warp keeps
// M x 2 KB in flight. The first chunk's weight loads are issued before
// pdlWait(): weights do not depend on the previous kernel. acc[mi][t] gets
// this lane's partial (the caller reduces the warp).
// Act (gemv_act.cuh): the int8 activations in memory (Q8In), or made by the
// block right after the wait (NormIn: every thread of the block must call this).
template <DevFormat F, int NT, int M, int CH, class Act = Q8In>
__device__ __forceinline__ void rowDotInt(const DevMatrix& wa, int64_t ra, const DevMatrix& wb, int64_t rb, const Act& act,
                                          int64_t t0, int ntok, int lane, float (*acc)[NT]) {
    const int64_t cols = wa.cols;
    const int64_t nb = cols / 32;
    bool waited = false;
    for (int64_t b0 = lane; b0 < nb || !waited; b0 += 32 * CH) {
        WBlock blk[M][CH];
#pragma unroll
        for (int mi = 0; mi < M; ++mi)
#pragma unroll
            for (int u = 0; u < CH; ++u) {
                const int64_t b = b0 + 32 * u;
                loadBlock<F>(blk[mi][u], mi == 0 ? wa : wb, mi == 0 ? ra : rb, b, b < nb);
            }
        if (!waited) {
            pdlWait();
            act.stage(cols);
            waited = true;
            if (b0 >= nb) break;
        }
#pragma unroll
        for (int u = 0; u < CH; ++u) {
            const int64_t b = b0 + 32 * u;
            if (b >= nb) break;
#pragma unroll
            for (int t = 0; t < NT; ++t) {
                if (t < ntok) {
                    int4 a0, a1;
                    float2 am;
                    act.load(t0 + t, b, cols, a0, a1, am);
#pragma unroll
                    for (int mi = 0; mi < M; ++mi) acc[mi][t] += dotBlock<F>(blk[mi][u], a0, a1, am);
                }
            }
        }
    }
}

}  // namespace kestrel::cuda::gemvdev
