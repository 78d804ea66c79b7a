// Dequantisation of one row, exactly as ggml (and gguf-py) define each format.
// The float operations are written in the reference's order, (d * sc) * q - (dmin * m),
// so results are bit-identical with gguf.quants.dequantize; this file must not be
// compiled with FMA contraction.
#include "fp16.h"
#include "matmul.h"
#include "quant_blocks.h"

#include <type_traits>

namespace kestrel::kernels {
namespace {

void dequantQ4_0(const BlockQ4_0* b, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFloat(b[i].d);
        for (int j = 0; j < 16; ++j) {
            y[j] = d * static_cast<float>((b[i].qs[j] & 0xf) - 8);
            y[j + 16] = d * static_cast<float>((b[i].qs[j] >> 4) - 8);
        }
    }
}

void dequantQ4_1(const BlockQ4_1* b, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFloat(b[i].d), m = fp16ToFloat(b[i].m);
        for (int j = 0; j < 16; ++j) {
            y[j] = d * static_cast<float>(b[i].qs[j] & 0xf) + m;
            y[j + 16] = d * static_cast<float>(b[i].qs[j] >> 4) + m;
        }
    }
}

uint32_t load32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }

void dequantQ5_0(const BlockQ5_0* b, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFloat(b[i].d);
        const uint32_t qh = load32(b[i].qh);
        for (int j = 0; j < 16; ++j) {
            const int lo = (b[i].qs[j] & 0xf) | ((qh >> j) & 1) << 4;
            const int hi = (b[i].qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4;
            y[j] = d * static_cast<float>(lo - 16);
            y[j + 16] = d * static_cast<float>(hi - 16);
        }
    }
}

void dequantQ5_1(const BlockQ5_1* b, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFloat(b[i].d), m = fp16ToFloat(b[i].m);
        const uint32_t qh = load32(b[i].qh);
        for (int j = 0; j < 16; ++j) {
            const int lo = (b[i].qs[j] & 0xf) | ((qh >> j) & 1) << 4;
            const int hi = (b[i].qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4;
            y[j] = d * static_cast<float>(lo) + m;
            y[j + 16] = d * static_cast<float>(hi) + m;
        }
    }
}

void dequantQ8_0(const BlockQ8_0* b, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFloat(b[i].d);
        for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(b[i].qs[j]) * d;
    }
}

void dequantQ2_K(const BlockQ2_K* b, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQKK) {
        const float d = fp16ToFloat(b[i].d), dmin = fp16ToFloat(b[i].dmin);
        for (int e = 0; e < kQKK; ++e) {
            const int h = e / 128, w = e % 128;
            const int q = (b[i].qs[h * 32 + w % 32] >> (2 * (w / 32))) & 3;
            const uint8_t sc = b[i].scales[e / 16];
            y[e] = (d * static_cast<float>(sc & 0xf)) * static_cast<float>(q) - dmin * static_cast<float>(sc >> 4);
        }
    }
}

// Q3_K's 16 six-bit scales, already offset by -32.
void q3kScales(const uint8_t* s, int out[16]) {
    for (int i = 0; i < 16; ++i) {
        const int lo = (i < 8 ? s[i] : s[i - 8] >> 4) & 0xf;
        const int hi = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
        out[i] = static_cast<int8_t>(lo | hi << 4) - 32;
    }
}

void dequantQ3_K(const BlockQ3_K* b, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQKK) {
        const float d = fp16ToFloat(b[i].d);
        int sc[16];
        q3kScales(b[i].scales, sc);
        for (int e = 0; e < kQKK; ++e) {
            const int h = e / 128, w = e % 128;
            const int ql = (b[i].qs[h * 32 + w % 32] >> (2 * (w / 32))) & 3;
            const int hbit = (b[i].hmask[e % 32] >> (e / 32)) & 1;
            const int q = ql - ((hbit ^ 1) << 2);
            y[e] = (d * static_cast<float>(sc[e / 16])) * static_cast<float>(q);
        }
    }
}

// Q4_K and Q5_K: the same super block (d, dmin, eight 6-bit scale and minimum pairs, the low
// nibbles of sub-block pairs); Q5_K adds each value's fifth bit from qh.
template <typename Block>
void dequantScaleMinK(const Block* b, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQKK) {
        const float d = fp16ToFloat(b[i].d), dmin = fp16ToFloat(b[i].dmin);
        for (int j = 0; j < 8; ++j) {
            uint8_t sc, m;
            kScaleMin(b[i].scales, j, sc, m);
            const float dl = d * static_cast<float>(sc), ml = dmin * static_cast<float>(m);
            const uint8_t* q = b[i].qs + (j / 2) * 32;
            const int shift = (j % 2) * 4;
            for (int l = 0; l < 32; ++l) {
                int v = (q[l] >> shift) & 0xf;
                if constexpr (std::is_same_v<Block, BlockQ5_K>) v |= ((b[i].qh[l] >> j) & 1) << 4;
                y[j * 32 + l] = dl * static_cast<float>(v) - ml;
            }
        }
    }
}

void dequantQ6_K(const BlockQ6_K* b, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQKK) {
        const float d = fp16ToFloat(b[i].d);
        for (int e = 0; e < kQKK; ++e) {
            const int h = e / 128, w = e % 128;
            const int ql = (b[i].ql[h * 64 + w % 64] >> (w >= 64 ? 4 : 0)) & 0xf;
            const int qh = (b[i].qh[h * 32 + w % 32] >> (2 * (w / 32))) & 3;
            const int q = (ql | qh << 4) - 32;
            y[e] = (d * static_cast<float>(b[i].scales[e / 16])) * static_cast<float>(q);
        }
    }
}

}  // namespace

void dequantizeRow(GgmlType type, const void* src, float* dst, int64_t n) {
    const auto* p = static_cast<const uint8_t*>(src);
    switch (type) {
    case GgmlType::F32:
        for (int64_t i = 0; i < n; ++i) dst[i] = reinterpret_cast<const float*>(p)[i];
        return;
    case GgmlType::F16:
        for (int64_t i = 0; i < n; ++i) dst[i] = fp16ToFloat(static_cast<uint16_t>(p[2 * i] | p[2 * i + 1] << 8));
        return;
    case GgmlType::BF16:
        for (int64_t i = 0; i < n; ++i) dst[i] = bf16ToFloat(static_cast<uint16_t>(p[2 * i] | p[2 * i + 1] << 8));
        return;
    case GgmlType::Q4_0: return dequantQ4_0(reinterpret_cast<const BlockQ4_0*>(p), dst, n / kQK);
    case GgmlType::Q4_1: return dequantQ4_1(reinterpret_cast<const BlockQ4_1*>(p), dst, n / kQK);
    case GgmlType::Q5_0: return dequantQ5_0(reinterpret_cast<const BlockQ5_0*>(p), dst, n / kQK);
    case GgmlType::Q5_1: return dequantQ5_1(reinterpret_cast<const BlockQ5_1*>(p), dst, n / kQK);
    case GgmlType::Q8_0: return dequantQ8_0(reinterpret_cast<const BlockQ8_0*>(p), dst, n / kQK);
    case GgmlType::Q2_K: return dequantQ2_K(reinterpret_cast<const BlockQ2_K*>(p), dst, n / kQKK);
    case GgmlType::Q3_K: return dequantQ3_K(reinterpret_cast<const BlockQ3_K*>(p), dst, n / kQKK);
    case GgmlType::Q4_K: return dequantScaleMinK(reinterpret_cast<const BlockQ4_K*>(p), dst, n / kQKK);
    case GgmlType::Q5_K: return dequantScaleMinK(reinterpret_cast<const BlockQ5_K*>(p), dst, n / kQKK);
    case GgmlType::Q6_K: return dequantQ6_K(reinterpret_cast<const BlockQ6_K*>(p), dst, n / kQKK);
    default:
        // Callers check computeSupported at load; zeros make a misuse visible in outputs.
        for (int64_t i = 0; i < n; ++i) dst[i] = 0.0f;
        return;
    }
}

}  // namespace kestrel::kernels
