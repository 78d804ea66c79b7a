// GGUF rows -> the CUDA kernels' block layouts (see cuda_repack.h).
#include "cuda_repack.h"

#include "fp16.h"          // kernels/cpu: fp16ToFloat
#include "ops.h"           // kernels/cpu: floatToHalf
#include "quant_blocks.h"  // kernels/cpu: GGUF block structs, kScaleMin

#include <cstring>

namespace kestrel::backend::cudaimpl {
namespace {

using namespace kestrel::kernels;

// One 32-value block of a device layout, filled by the per-type unpackers.
struct Out32 {
    int8_t code[32];  // quants as the kernel multiplies them
    float d0 = 0.0f, d1 = 0.0f, m = 0.0f;  // scale of values 0-15 and 16-31, min
};

uint32_t load32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }

void store16(uint8_t* p, float v) {
    const uint16_t h = floatToHalf(v);
    std::memcpy(p, &h, 2);
}

// Writes block `o` in the layout `format`: quants at qs, scales at sc.
void emit(cuda::DevFormat format, const Out32& o, uint8_t* qs, uint8_t* sc) {
    switch (format) {
    case cuda::DevFormat::Q4_0:
    case cuda::DevFormat::Q4_1:  // GGML nibble order: byte j holds values j and j + 16
        for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((o.code[j] & 15) | (o.code[j + 16] & 15) << 4);
        store16(sc, o.d0);
        if (format == cuda::DevFormat::Q4_1) store16(sc + 2, o.m);
        return;
    case cuda::DevFormat::Q8_0:
        std::memcpy(qs, o.code, 32);
        store16(sc, o.d0);
        return;
    case cuda::DevFormat::Q8_16:
        std::memcpy(qs, o.code, 32);
        store16(sc, o.d0);
        store16(sc + 2, o.d1);
        store16(sc + 4, o.m);
        store16(sc + 6, 0.0f);
        return;
    case cuda::DevFormat::F16: return;
    }
}

// Calls fn(block index within the row, Out32) for each 32-value block of one row.
template <typename Fn>
void unpackRow(GgmlType type, const uint8_t* row, int64_t cols, Fn&& fn) {
    Out32 o;
    switch (type) {
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
    case GgmlType::Q5_0:
    case GgmlType::Q5_1: {
        // The 32-value formats: d (and m for _1), qh[4] for Q5, qs[16]; byte j of qs holds
        // values j and j + 16 (bit j and j + 16 of qh on top for Q5). Q4_0 keeps its raw
        // nibbles (the kernel subtracts 8); Q5_0's codes are centred on 16 here.
        const bool withMin = type == GgmlType::Q4_1 || type == GgmlType::Q5_1;
        const bool five = type == GgmlType::Q5_0 || type == GgmlType::Q5_1;
        const size_t bytes = ggmlTypeTraits(type)->blockBytes;
        for (int64_t b = 0; b < cols / kQK; ++b) {
            const uint8_t* p = row + b * bytes;
            uint16_t d, m = 0;
            std::memcpy(&d, p, 2);
            if (withMin) std::memcpy(&m, p + 2, 2);
            const uint8_t* after = p + (withMin ? 4 : 2);
            const uint32_t qh = five ? load32(after) : 0;
            const uint8_t* qs = five ? after + 4 : after;
            const int centre = type == GgmlType::Q5_0 ? 16 : 0;
            for (int j = 0; j < 16; ++j) {
                o.code[j] = static_cast<int8_t>(((qs[j] & 0xf) | ((qh >> j) & 1) << 4) - centre);
                o.code[j + 16] = static_cast<int8_t>(((qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4) - centre);
            }
            o.d0 = o.d1 = fp16ToFloat(d);
            o.m = withMin ? fp16ToFloat(m) : 0.0f;
            fn(b, o);
        }
        return;
    }
    case GgmlType::Q8_0:
        for (int64_t b = 0; b < cols / kQK; ++b) {
            const auto* blk = reinterpret_cast<const BlockQ8_0*>(row) + b;
            std::memcpy(o.code, blk->qs, 32);
            o.d0 = o.d1 = fp16ToFloat(blk->d);
            o.m = 0.0f;
            fn(b, o);
        }
        return;
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
        // Sub-block j of a super block: values (qs[(j/2)*32 + l] >> 4 (j%2)) & 15
        // (Q5_K: bit j of qh[l] on top), scaled (d*sc) q - (dmin*m) as dequant.cpp does.
        for (int64_t s = 0; s < cols / kQKK; ++s) {
            const bool five = type == GgmlType::Q5_K;
            const uint8_t* p = row + s * (five ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K));
            uint16_t dh, dminh;
            std::memcpy(&dh, p, 2);
            std::memcpy(&dminh, p + 2, 2);
            const float d = fp16ToFloat(dh), dmin = fp16ToFloat(dminh);
            const uint8_t* scales = p + 4;
            const uint8_t* qh = five ? reinterpret_cast<const BlockQ5_K*>(p)->qh : nullptr;
            const uint8_t* qs = five ? reinterpret_cast<const BlockQ5_K*>(p)->qs : reinterpret_cast<const BlockQ4_K*>(p)->qs;
            for (int j = 0; j < 8; ++j) {
                uint8_t sc, m;
                kScaleMin(scales, j, sc, m);
                const uint8_t* q = qs + (j / 2) * 32;
                const int shift = (j % 2) * 4;
                for (int l = 0; l < 32; ++l) {
                    int v = (q[l] >> shift) & 0xf;
                    if (five) v |= ((qh[l] >> j) & 1) << 4;
                    o.code[l] = static_cast<int8_t>(v);
                }
                o.d0 = o.d1 = d * static_cast<float>(sc);
                o.m = -(dmin * static_cast<float>(m));
                fn(s * 8 + j, o);
            }
        }
        return;
    case GgmlType::Q6_K:
        for (int64_t s = 0; s < cols / kQKK; ++s) {
            const auto* blk = reinterpret_cast<const BlockQ6_K*>(row) + s;
            const float d = fp16ToFloat(blk->d);
            for (int j = 0; j < 8; ++j) {
                for (int l = 0; l < 32; ++l) {
                    const int e = j * 32 + l, h = e / 128, w = e % 128;
                    const int ql = (blk->ql[h * 64 + w % 64] >> (w >= 64 ? 4 : 0)) & 0xf;
                    const int qhv = (blk->qh[h * 32 + w % 32] >> (2 * (w / 32))) & 3;
                    o.code[l] = static_cast<int8_t>((ql | qhv << 4) - 32);
                }
                o.d0 = d * static_cast<float>(blk->scales[2 * j]);
                o.d1 = d * static_cast<float>(blk->scales[2 * j + 1]);
                o.m = 0.0f;
                fn(s * 8 + j, o);
            }
        }
        return;
    default: return;
    }
}

}  // namespace

std::optional<DeviceLayout> deviceLayoutFor(GgmlType type) {
    switch (type) {
    case GgmlType::Q4_0: return DeviceLayout{cuda::DevFormat::Q4_0, 16, 2};
    case GgmlType::Q4_1:
    case GgmlType::Q4_K: return DeviceLayout{cuda::DevFormat::Q4_1, 16, 4};
    case GgmlType::Q8_0:
    case GgmlType::Q5_0: return DeviceLayout{cuda::DevFormat::Q8_0, 32, 2};
    case GgmlType::Q5_1:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K: return DeviceLayout{cuda::DevFormat::Q8_16, 32, 8};
    default: return std::nullopt;
    }
}

void repackRows(GgmlType type, const uint8_t* src, int64_t cols, int64_t r0, int64_t r1, uint8_t* qs,
                uint8_t* scales) {
    const auto layout = deviceLayoutFor(type);
    const auto rowBytes = ggmlRowBytes(type, static_cast<uint64_t>(cols));
    if (!layout || !rowBytes) return;
    const int64_t nb = cols / kQK;
    for (int64_t r = r0; r < r1; ++r) {
        unpackRow(type, src + static_cast<size_t>(r) * *rowBytes, cols, [&](int64_t b, const Out32& o) {
            const int64_t i = r * nb + b;
            emit(layout->format, o, qs + i * layout->qsBytes, scales + i * layout->scaleBytes);
        });
    }
}

}  // namespace kestrel::backend::cudaimpl
