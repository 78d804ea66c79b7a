// Weight rows -> the intermediate u8 form (see quant_blocks.h), and the int8
// activation quantiser. Each format becomes  w[c] = scale4[c/4] * u[c] + offset,
// where the offset's contribution is carried by corr16[c/16] * (dx * sum of 16 x quants).
#include "fp16.h"
#include "quant_blocks.h"

#include <cmath>
#include <cstring>

namespace kestrel::kernels {
namespace {

size_t align64(size_t n) { return (n + 63) / 64 * 64; }

void fill(float* p, int n, float v) {
    for (int i = 0; i < n; ++i) p[i] = v;
}

// One 32-element group with one scale and one offset coefficient.
void setGroup32(float* scale4, float* corr16, int64_t c, float scale, float corr) {
    fill(scale4 + c / 4, 8, scale);
    corr16[c / 16] = corr;
    corr16[c / 16 + 1] = corr;
}

void unpackQ4_0(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const BlockQ4_0*>(row);
    for (int64_t i = 0; i < nb; ++i) {
        uint8_t* q = u + i * 32;
        for (int j = 0; j < 16; ++j) {
            q[j] = b[i].qs[j] & 0xf;
            q[j + 16] = b[i].qs[j] >> 4;
        }
        const float d = fp16ToFloat(b[i].d);
        setGroup32(s4, c16, i * 32, d, -8.0f * d);
    }
}

void unpackQ4_1(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const BlockQ4_1*>(row);
    for (int64_t i = 0; i < nb; ++i) {
        uint8_t* q = u + i * 32;
        for (int j = 0; j < 16; ++j) {
            q[j] = b[i].qs[j] & 0xf;
            q[j + 16] = b[i].qs[j] >> 4;
        }
        setGroup32(s4, c16, i * 32, fp16ToFloat(b[i].d), fp16ToFloat(b[i].m));
    }
}

template <typename Block>
void unpack5Bits(const Block& b, uint8_t* q) {
    uint32_t qh;
    std::memcpy(&qh, b.qh, 4);
    for (int j = 0; j < 16; ++j) {
        q[j] = static_cast<uint8_t>((b.qs[j] & 0xf) | ((qh >> j) & 1) << 4);
        q[j + 16] = static_cast<uint8_t>((b.qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4);
    }
}

void unpackQ5_0(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const BlockQ5_0*>(row);
    for (int64_t i = 0; i < nb; ++i) {
        unpack5Bits(b[i], u + i * 32);
        const float d = fp16ToFloat(b[i].d);
        setGroup32(s4, c16, i * 32, d, -16.0f * d);
    }
}

void unpackQ5_1(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const BlockQ5_1*>(row);
    for (int64_t i = 0; i < nb; ++i) {
        unpack5Bits(b[i], u + i * 32);
        setGroup32(s4, c16, i * 32, fp16ToFloat(b[i].d), fp16ToFloat(b[i].m));
    }
}

void unpackQ8_0(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(row);
    for (int64_t i = 0; i < nb; ++i) {
        uint8_t* q = u + i * 32;
        for (int j = 0; j < 32; ++j) q[j] = static_cast<uint8_t>(b[i].qs[j]) ^ 0x80;  // w + 128
        const float d = fp16ToFloat(b[i].d);
        setGroup32(s4, c16, i * 32, d, -128.0f * d);
    }
}

void unpackQ2_K(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const BlockQ2_K*>(row);
    for (int64_t i = 0; i < nb; ++i) {
        uint8_t* q = u + i * kQKK;
        for (int e = 0; e < kQKK; ++e) {
            const int h = e / 128, w = e % 128;
            q[e] = (b[i].qs[h * 32 + w % 32] >> (2 * (w / 32))) & 3;
        }
        const float d = fp16ToFloat(b[i].d), dmin = fp16ToFloat(b[i].dmin);
        for (int k = 0; k < 16; ++k) {
            fill(s4 + i * 64 + k * 4, 4, d * static_cast<float>(b[i].scales[k] & 0xf));
            c16[i * 16 + k] = -dmin * static_cast<float>(b[i].scales[k] >> 4);
        }
    }
}

void unpackQ3_K(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const BlockQ3_K*>(row);
    for (int64_t i = 0; i < nb; ++i) {
        uint8_t* q = u + i * kQKK;
        for (int e = 0; e < kQKK; ++e) {
            const int h = e / 128, w = e % 128;
            const int ql = (b[i].qs[h * 32 + w % 32] >> (2 * (w / 32))) & 3;
            const int hbit = (b[i].hmask[e % 32] >> (e / 32)) & 1;
            q[e] = static_cast<uint8_t>(ql + (hbit << 2));  // (ql - 4*(1-hbit)) + 4
        }
        const float d = fp16ToFloat(b[i].d);
        for (int k = 0; k < 16; ++k) {
            const int lo = (k < 8 ? b[i].scales[k] : b[i].scales[k - 8] >> 4) & 0xf;
            const int hi = (b[i].scales[8 + k % 4] >> (2 * (k / 4))) & 3;
            const float dl = d * static_cast<float>(static_cast<int8_t>(lo | hi << 4) - 32);
            fill(s4 + i * 64 + k * 4, 4, dl);
            c16[i * 16 + k] = -4.0f * dl;
        }
    }
}

template <typename Block, bool FiveBits>
void unpackQ45_K(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const Block*>(row);
    for (int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFloat(b[i].d), dmin = fp16ToFloat(b[i].dmin);
        for (int j = 0; j < 8; ++j) {
            uint8_t sc, m;
            kScaleMin(b[i].scales, j, sc, m);
            const uint8_t* src = b[i].qs + (j / 2) * 32;
            const int shift = (j % 2) * 4;
            uint8_t* q = u + i * kQKK + j * 32;
            for (int l = 0; l < 32; ++l) {
                int v = (src[l] >> shift) & 0xf;
                if constexpr (FiveBits) v |= ((b[i].qh[l] >> j) & 1) << 4;
                q[l] = static_cast<uint8_t>(v);
            }
            setGroup32(s4, c16, i * kQKK + j * 32, d * static_cast<float>(sc), -dmin * static_cast<float>(m));
        }
    }
}

void unpackQ6_K(const uint8_t* row, int64_t nb, uint8_t* u, float* s4, float* c16) {
    const auto* b = reinterpret_cast<const BlockQ6_K*>(row);
    for (int64_t i = 0; i < nb; ++i) {
        uint8_t* q = u + i * kQKK;
        for (int h = 0; h < 2; ++h) {
            const uint8_t* ql = b[i].ql + h * 64;
            const uint8_t* qh = b[i].qh + h * 32;
            uint8_t* o = q + h * 128;
            for (int l = 0; l < 32; ++l) {
                o[l] = static_cast<uint8_t>((ql[l] & 0xf) | (qh[l] & 3) << 4);
                o[l + 32] = static_cast<uint8_t>((ql[l + 32] & 0xf) | ((qh[l] >> 2) & 3) << 4);
                o[l + 64] = static_cast<uint8_t>((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4);
                o[l + 96] = static_cast<uint8_t>((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4);
            }
        }
        const float d = fp16ToFloat(b[i].d);
        for (int k = 0; k < 16; ++k) {
            const float dl = d * static_cast<float>(b[i].scales[k]);
            fill(s4 + i * 64 + k * 4, 4, dl);
            c16[i * 16 + k] = -32.0f * dl;
        }
    }
}

struct UnpackEntry {
    GgmlType type;
    int blockSize;
    UnpackRowFn fn;
};

constexpr UnpackEntry kUnpackers[] = {
    {GgmlType::Q4_0, kQK, unpackQ4_0},  {GgmlType::Q4_1, kQK, unpackQ4_1},
    {GgmlType::Q5_0, kQK, unpackQ5_0},  {GgmlType::Q5_1, kQK, unpackQ5_1},
    {GgmlType::Q8_0, kQK, unpackQ8_0},  {GgmlType::Q2_K, kQKK, unpackQ2_K},
    {GgmlType::Q3_K, kQKK, unpackQ3_K}, {GgmlType::Q4_K, kQKK, unpackQ45_K<BlockQ4_K, false>},
    {GgmlType::Q5_K, kQKK, unpackQ45_K<BlockQ5_K, true>}, {GgmlType::Q6_K, kQKK, unpackQ6_K},
};

const UnpackEntry* findUnpacker(GgmlType type) {
    for (const auto& e : kUnpackers)
        if (e.type == type) return &e;
    return nullptr;
}

}  // namespace

size_t unpackedTileBytes(int64_t colsPadded, int rows) {
    const auto n = static_cast<size_t>(colsPadded) * static_cast<size_t>(rows);
    return align64(n) + align64(n) + align64(n / 4) + 64;
}

UnpackedTile makeUnpackedTile(void* scratch, int64_t colsPadded, int rows) {
    auto base = (reinterpret_cast<uintptr_t>(scratch) + 63) / 64 * 64;
    const auto n = static_cast<size_t>(colsPadded) * static_cast<size_t>(rows);
    UnpackedTile t;
    t.colsPadded = colsPadded;
    t.u = reinterpret_cast<uint8_t*>(base);
    t.scale4 = reinterpret_cast<float*>(base + align64(n));
    t.corr16 = reinterpret_cast<float*>(base + align64(n) + align64(n));
    return t;
}

bool hasIntegerPath(GgmlType type) { return findUnpacker(type) != nullptr; }

int scaleGroupOf(GgmlType type) {
    switch (type) {
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
    case GgmlType::Q6_K: return 16;
    default: return 32;
    }
}

void unpackRowsWith(UnpackRowFn fn, int blockSize, GgmlType type, const uint8_t* w, size_t rowBytes, int rows,
                    int64_t cols, UnpackedTile& tile) {
    const int64_t cp = tile.colsPadded;
    tile.rows = rows;
    tile.signedU = type == GgmlType::Q8_0;
    tile.scaleGroup = scaleGroupOf(type);
    for (int r = 0; r < rows; ++r) {
        uint8_t* u = tile.u + r * cp;
        float* s4 = tile.scale4 + r * cp / 4;
        float* c16 = tile.corr16 + r * cp / 16;
        fn(w + r * rowBytes, cols / blockSize, u, s4, c16);
        padTileRow(tile, r, cols);
    }
}

bool unpackRows(GgmlType type, const uint8_t* w, size_t rowBytes, int rows, int64_t cols, UnpackedTile& tile) {
    const UnpackEntry* e = findUnpacker(type);
    if (!e) return false;
    unpackRowsWith(e->fn, e->blockSize, type, w, rowBytes, rows, cols, tile);
    return true;
}

void padTileRow(UnpackedTile& tile, int r, int64_t cols) {
    const int64_t cp = tile.colsPadded;
    if (cols == cp) return;
    // Zero weights with zero scale contribute nothing (the activations are zero there too).
    std::memset(tile.u + r * cp + cols, tile.signedU ? 0x80 : 0, static_cast<size_t>(cp - cols));
    fill(tile.scale4 + r * cp / 4 + cols / 4, static_cast<int>((cp - cols) / 4), 0.0f);
    fill(tile.corr16 + r * cp / 16 + cols / 16, static_cast<int>((cp - cols) / 16), 0.0f);
}

void quantizeActivations(const float* x, int64_t cols, int64_t t0, int64_t t1, int8_t* qs, float* dx4, float* s16,
                         int64_t colsPadded) {
    for (int64_t t = t0; t < t1; ++t) {
        const float* xr = x + t * cols;
        int8_t* q = qs + t * colsPadded;
        float* d4 = dx4 + t * colsPadded / 4;
        float* s = s16 + t * colsPadded / 16;
        for (int64_t c = 0; c < cols; c += kQK) {
            float amax = 0.0f;
            for (int j = 0; j < kQK; ++j) amax = std::fmax(amax, std::fabs(xr[c + j]));
            const float d = amax / 127.0f;
            const float id = d != 0.0f ? 1.0f / d : 0.0f;
            int sum[2] = {0, 0};
            for (int j = 0; j < kQK; ++j) {
                const int v = static_cast<int>(std::nearbyint(xr[c + j] * id));
                q[c + j] = static_cast<int8_t>(v < -127 ? -127 : (v > 127 ? 127 : v));
                sum[j / 16] += q[c + j];
            }
            fill(d4 + c / 4, 8, d);
            s[c / 16] = d * static_cast<float>(sum[0]);
            s[c / 16 + 1] = d * static_cast<float>(sum[1]);
        }
        zeroActivationPadding(q, d4, s, cols, colsPadded);
    }
}

}  // namespace kestrel::kernels
