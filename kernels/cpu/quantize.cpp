// Round-to-nearest quantisers. The 32-block formats follow ggml's *_ref
// quantisers operation for operation (so a row quantised here is the same bytes
// as ggml's); the K-quants use a plain min/max round-to-nearest per sub-block
// rather than ggml's iterative scale search: valid files, slightly larger error.
#include "fp16.h"
#include "matmul.h"
#include "quant_blocks.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kestrel::kernels {
namespace {

// The value of largest magnitude, sign kept (the first such value, as ggml).
float signedAbsMax(const float* x, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; ++j)
        if (std::fabs(x[j]) > amax) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    return max;
}

void quantQ4_0(const float* x, BlockQ4_0* b, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        const float d = signedAbsMax(x, kQK) / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = floatToFp16(d);
        for (int j = 0; j < 16; ++j) {
            const auto q0 = static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>(x[j] * id + 8.5f)));
            const auto q1 = static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>(x[j + 16] * id + 8.5f)));
            b[i].qs[j] = static_cast<uint8_t>(q0 | q1 << 4);
        }
    }
}

template <typename Block, int Levels>
void quantMinMax(const float* x, Block* b, int64_t nb, uint8_t* qOut) {
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        float mn = x[0], mx = x[0];
        for (int j = 1; j < kQK; ++j) {
            mn = std::min(mn, x[j]);
            mx = std::max(mx, x[j]);
        }
        const float d = (mx - mn) / static_cast<float>(Levels);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = floatToFp16(d);
        b[i].m = floatToFp16(mn);
        for (int j = 0; j < kQK; ++j)
            qOut[i * kQK + j] = static_cast<uint8_t>(std::min<int>(Levels, static_cast<int8_t>((x[j] - mn) * id + 0.5f)));
    }
}

void packNibbles(const uint8_t* q, uint8_t* qs) {
    for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((q[j] & 0xf) | (q[j + 16] & 0xf) << 4);
}

void packHighBits(const uint8_t* q, uint8_t* qh) {
    uint32_t h = 0;
    for (int j = 0; j < 32; ++j) h |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
    std::memcpy(qh, &h, 4);
}

void quantQ5_0(const float* x, BlockQ5_0* b, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        const float d = signedAbsMax(x, kQK) / -16.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = floatToFp16(d);
        uint8_t q[kQK];
        for (int j = 0; j < kQK; ++j) q[j] = static_cast<uint8_t>(std::min<int>(31, static_cast<int8_t>(x[j] * id + 16.5f)));
        packNibbles(q, b[i].qs);
        packHighBits(q, b[i].qh);
    }
}

void quantQ8_0(const float* x, BlockQ8_0* b, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        float amax = 0.0f;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = floatToFp16(d);
        for (int j = 0; j < kQK; ++j) b[i].qs[j] = static_cast<int8_t>(std::roundf(x[j] * id));
    }
}

int nearestInt(float v) { return static_cast<int>(std::nearbyint(v)); }

// Q4_K / Q5_K: per 32-element sub-block an affine range [min(x,0), max(x)],
// then 6-bit scales and mins relative to the super block's d and dmin.
template <typename Block, bool FiveBits>
void quantQ45_K(const float* x, Block* b, int64_t nb) {
    constexpr int levels = FiveBits ? 31 : 15;
    for (int64_t i = 0; i < nb; ++i, x += kQKK) {
        float scales[8], mins[8];
        float maxScale = 0.0f, maxMin = 0.0f;
        for (int j = 0; j < 8; ++j) {
            float mn = 0.0f, mx = x[j * 32];
            for (int l = 0; l < 32; ++l) {
                mn = std::min(mn, x[j * 32 + l]);
                mx = std::max(mx, x[j * 32 + l]);
            }
            mx = std::max(mx, mn);
            scales[j] = (mx - mn) / levels;
            mins[j] = -mn;
            maxScale = std::max(maxScale, scales[j]);
            maxMin = std::max(maxMin, mins[j]);
        }
        const float d = maxScale / 63.0f, dmin = maxMin / 63.0f;
        b[i].d = floatToFp16(d);
        b[i].dmin = floatToFp16(dmin);
        const float dq = fp16ToFloat(b[i].d), dminq = fp16ToFloat(b[i].dmin);
        uint8_t sc[8], m[8];
        for (int j = 0; j < 8; ++j) {
            sc[j] = static_cast<uint8_t>(std::clamp(dq > 0 ? nearestInt(scales[j] / dq) : 0, 0, 63));
            m[j] = static_cast<uint8_t>(std::clamp(dminq > 0 ? nearestInt(mins[j] / dminq) : 0, 0, 63));
        }
        std::memset(b[i].scales, 0, 12);
        for (int j = 0; j < 8; ++j) {
            if (j < 4) {
                b[i].scales[j] = sc[j];
                b[i].scales[j + 4] = m[j];
            } else {
                b[i].scales[j + 4] = static_cast<uint8_t>((sc[j] & 0xf) | (m[j] & 0xf) << 4);
                b[i].scales[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
                b[i].scales[j] |= static_cast<uint8_t>((m[j] >> 4) << 6);
            }
        }
        std::memset(b[i].qs, 0, sizeof b[i].qs);
        if constexpr (FiveBits) std::memset(b[i].qh, 0, sizeof b[i].qh);
        for (int j = 0; j < 8; ++j) {
            const float dl = dq * sc[j], ml = dminq * m[j];
            for (int l = 0; l < 32; ++l) {
                const int q = dl > 0 ? std::clamp(nearestInt((x[j * 32 + l] + ml) / dl), 0, levels) : 0;
                b[i].qs[(j / 2) * 32 + l] |= static_cast<uint8_t>((q & 0xf) << ((j % 2) * 4));
                if constexpr (FiveBits) b[i].qh[l] |= static_cast<uint8_t>(((q >> 4) & 1) << j);
            }
        }
    }
}

void quantQ6_K(const float* x, BlockQ6_K* b, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += kQKK) {
        float scales[16];
        float maxAbs = 0.0f, maxScale = 0.0f;
        for (int k = 0; k < 16; ++k) {
            scales[k] = signedAbsMax(x + k * 16, 16) / -32.0f;
            if (std::fabs(scales[k]) > maxAbs) {
                maxAbs = std::fabs(scales[k]);
                maxScale = scales[k];
            }
        }
        const float d = maxScale / -128.0f;
        b[i].d = floatToFp16(d);
        const float dq = fp16ToFloat(b[i].d);
        std::memset(b[i].ql, 0, sizeof b[i].ql);
        std::memset(b[i].qh, 0, sizeof b[i].qh);
        for (int k = 0; k < 16; ++k) {
            const int sc = dq != 0 ? std::clamp(nearestInt(scales[k] / dq), -128, 127) : 0;
            b[i].scales[k] = static_cast<int8_t>(sc);
            const float dl = dq * static_cast<float>(sc);
            for (int l = 0; l < 16; ++l) {
                const int e = k * 16 + l;
                const int q = (dl != 0 ? std::clamp(nearestInt(x[e] / dl), -32, 31) : 0) + 32;
                const int h = e / 128, w = e % 128;
                b[i].ql[h * 64 + w % 64] |= static_cast<uint8_t>((q & 0xf) << (w >= 64 ? 4 : 0));
                b[i].qh[h * 32 + w % 32] |= static_cast<uint8_t>((q >> 4) << (2 * (w / 32)));
            }
        }
    }
}

}  // namespace

bool quantizeRow(GgmlType type, const float* src, void* dst, int64_t n) {
    auto* out = static_cast<uint8_t*>(dst);
    switch (type) {
    case GgmlType::F32: std::memcpy(out, src, static_cast<size_t>(n) * 4); return true;
    case GgmlType::F16:
        for (int64_t i = 0; i < n; ++i) {
            const uint16_t h = floatToFp16(src[i]);
            std::memcpy(out + 2 * i, &h, 2);
        }
        return true;
    case GgmlType::BF16:
        for (int64_t i = 0; i < n; ++i) {
            const uint16_t h = floatToBf16(src[i]);
            std::memcpy(out + 2 * i, &h, 2);
        }
        return true;
    case GgmlType::Q4_0: quantQ4_0(src, reinterpret_cast<BlockQ4_0*>(out), n / kQK); return true;
    case GgmlType::Q4_1: {
        auto* b = reinterpret_cast<BlockQ4_1*>(out);
        for (int64_t i = 0; i < n / kQK; ++i) {
            uint8_t q[kQK];
            quantMinMax<BlockQ4_1, 15>(src + i * kQK, b + i, 1, q);
            packNibbles(q, b[i].qs);
        }
        return true;
    }
    case GgmlType::Q5_0: quantQ5_0(src, reinterpret_cast<BlockQ5_0*>(out), n / kQK); return true;
    case GgmlType::Q5_1: {
        auto* b = reinterpret_cast<BlockQ5_1*>(out);
        for (int64_t i = 0; i < n / kQK; ++i) {
            uint8_t q[kQK];
            quantMinMax<BlockQ5_1, 31>(src + i * kQK, b + i, 1, q);
            packNibbles(q, b[i].qs);
            packHighBits(q, b[i].qh);
        }
        return true;
    }
    case GgmlType::Q8_0: quantQ8_0(src, reinterpret_cast<BlockQ8_0*>(out), n / kQK); return true;
    case GgmlType::Q4_K: quantQ45_K<BlockQ4_K, false>(src, reinterpret_cast<BlockQ4_K*>(out), n / kQKK); return true;
    case GgmlType::Q5_K: quantQ45_K<BlockQ5_K, true>(src, reinterpret_cast<BlockQ5_K*>(out), n / kQKK); return true;
    case GgmlType::Q6_K: quantQ6_K(src, reinterpret_cast<BlockQ6_K*>(out), n / kQKK); return true;
    default: return false;
    }
}

}  // namespace kestrel::kernels
