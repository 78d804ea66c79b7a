// Exact scalar conversions between float and the 16-bit float formats GGUF uses.
//
// These are bit-exact with numpy's float16 casts (round to nearest even) and
// ggml's bf16 rounding, so that dequantised values match the python reference
// to the last bit. SIMD paths use F16C instead; both agree on every finite input.
#pragma once

#include <cstdint>
#include <cstring>

namespace kestrel::kernels {

inline float bitsToFloat(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline uint32_t floatToBits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

inline float fp16ToFloat(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0x1f) return bitsToFloat(sign | 0x7f800000u | (mant << 13));  // inf / nan
    if (exp == 0) {
        if (mant == 0) return bitsToFloat(sign);
        // Subnormal half: renormalise into a normal float.
        int e = -1;
        do {
            ++e;
            mant <<= 1;
        } while ((mant & 0x400) == 0);
        mant &= 0x3ff;
        return bitsToFloat(sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant << 13));
    }
    return bitsToFloat(sign | (exp + 127 - 15) << 23 | (mant << 13));
}

inline uint16_t floatToFp16(float f) {
    const uint32_t u = floatToBits(f);
    const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
    const uint32_t absu = u & 0x7fffffffu;
    if (absu >= 0x7f800000u) return sign | (absu > 0x7f800000u ? 0x7e00 : 0x7c00);
    if (absu >= 0x477ff000u) return sign | 0x7c00;  // rounds past the largest half
    if (absu < 0x38800000u) {
        // Subnormal half (or zero): value = m * 2^-24, round half to even.
        if (absu < 0x33000000u) return sign;  // below half the smallest subnormal
        const uint32_t e = absu >> 23;
        const uint32_t m = (absu & 0x7fffff) | 0x800000;
        const uint32_t shift = 126 - e;  // 14 + (113 - e) - ... places m so that 2^-24 is the unit
        const uint32_t q = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1);
        const uint32_t half = 1u << (shift - 1);
        uint32_t r = q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
        return sign | static_cast<uint16_t>(r);
    }
    // Normal: drop 13 mantissa bits with round half to even (carry may bump the exponent).
    const uint32_t r = absu + 0xfff + ((absu >> 13) & 1);
    return sign | static_cast<uint16_t>((r - 0x38000000u) >> 13);
}

inline float bf16ToFloat(uint16_t h) { return bitsToFloat(static_cast<uint32_t>(h) << 16); }

inline uint16_t floatToBf16(float f) {
    uint32_t u = floatToBits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 64);  // quiet nan
    return static_cast<uint16_t>((u + (0x7fff + ((u >> 16) & 1))) >> 16);
}

}  // namespace kestrel::kernels
