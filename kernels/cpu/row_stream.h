// Internal to kernels/cpu: software prefetch of the weight rows a decode GEMV
// streams (gemv_avx512vbmi.cpp, gemv_lanes_avx512.cpp, gemv_lanes_avx2.cpp).
// Header-only so each ISA file inlines it with its own target flags, and in an
// unnamed namespace so that no file links another's copy (one built with
// AVX-512 flags must not serve an AVX2 machine).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace kestrel::kernels {
namespace {

// KESTREL_PF_DIST overrides the distance (to compare).
inline int prefetchDistance() {
    static const int d = std::getenv("KESTREL_PF_DIST") ? std::atoi(std::getenv("KESTREL_PF_DIST")) : 6144;
    return d;
}

// The stream of one call's rows: every cache line is prefetched `distance`
// bytes before the kernel reads it. The first `distance` bytes are requested
// all at once on entry (a product's weights rarely follow the previous
// product's in memory, so nothing has brought them in), and nothing past the
// end is requested (that would be another thread's rows or another tensor).
//
// The lines go to L2, not L1 (_MM_HINT_T1). The likely reason it is faster: a
// request into L1 holds one of L1's few miss buffers until DRAM answers, which
// the kernel's own loads then wait for, most of all when several tokens make
// the kernel compute-dense. Measured on the Zen 4 VM (docs/PERFORMANCE.md, fourteenth
// session): one-token decode +15-20 %, the 4-token step's ffn down 33-41 ->
// 19-21 us; 4096 -> 6144 bytes with the L2 hint.
class RowStream {
public:
    RowStream(const uint8_t* begin, size_t bytes) : end_(begin + bytes), d_(prefetchDistance()) {
        if (d_ > 0) prefetch(begin, std::min<size_t>(bytes, static_cast<size_t>(d_)));
    }
    // Called before reading [p, p + bytes).
    void ahead(const uint8_t* p, size_t bytes) const {
        if (d_ > 0 && end_ - p > d_) prefetch(p + d_, std::min<size_t>(bytes, static_cast<size_t>(end_ - p - d_)));
    }

private:
    static void prefetch(const uint8_t* p, size_t bytes) {
        for (size_t o = 0; o < bytes; o += 64) _mm_prefetch(reinterpret_cast<const char*>(p + o), _MM_HINT_T1);
    }
    const uint8_t* end_;
    int d_;
};

}  // namespace
}  // namespace kestrel::kernels
