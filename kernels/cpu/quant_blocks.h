// Internal to kernels/cpu: GGML block layouts and the two intermediate forms
// every integer matmul path shares.
//
// Why an intermediate form: ggml has a dozen block formats, and writing a SIMD
// dot product per format per ISA is where bugs hide. Instead a tile of weight
// rows is first unpacked (once per call, per thread, into L1-sized scratch) to
//   u8 quants, a float scale per group of 4 quants, a float correction per 16,
// so that every format is  w = scale * u + corr/(dx*sum).  The ISA kernels then
// only implement one product: u8 weights x s8 activations (VNNI's dpbusd),
// multiplied by per-lane float scales. The correction terms (minimums and the
// zero-point offset of signed formats) are a short float dot with per-16 sums
// of the activations.
#pragma once

#include "ggml_types.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kestrel::kernels {

constexpr int kQK = 32;      // elements per block of the 32-block formats
constexpr int kQKK = 256;    // elements per K-quant super block
constexpr int kPadCols = 64; // intermediate rows are padded to whole 64-element pairs

#pragma pack(push, 1)
struct BlockQ4_0 { uint16_t d; uint8_t qs[16]; };
struct BlockQ4_1 { uint16_t d, m; uint8_t qs[16]; };
struct BlockQ5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[16]; };
struct BlockQ5_1 { uint16_t d, m; uint8_t qh[4]; uint8_t qs[16]; };
struct BlockQ8_0 { uint16_t d; int8_t qs[32]; };
struct BlockQ2_K { uint8_t scales[16]; uint8_t qs[64]; uint16_t d, dmin; };
struct BlockQ3_K { uint8_t hmask[32]; uint8_t qs[64]; uint8_t scales[12]; uint16_t d; };
struct BlockQ4_K { uint16_t d, dmin; uint8_t scales[12]; uint8_t qs[128]; };
struct BlockQ5_K { uint16_t d, dmin; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]; };
struct BlockQ6_K { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; uint16_t d; };
#pragma pack(pop)
static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34 && sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110 && sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);

// The 6-bit scale j (0..7) and min j of a Q4_K/Q5_K super block.
inline void kScaleMin(const uint8_t* s, int j, uint8_t& sc, uint8_t& m) {
    if (j < 4) {
        sc = s[j] & 63;
        m = s[j + 4] & 63;
    } else {
        sc = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4);
        m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

// The inverse: the 12 bytes that hold 6-bit scales sc[8] and mins m[8].
inline void kPackScaleMin(const uint8_t* sc, const uint8_t* m, uint8_t* s) {
    for (int j = 0; j < 4; ++j) {
        s[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        s[j + 4] = static_cast<uint8_t>((m[j] & 63) | ((m[j + 4] >> 4) << 6));
        s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xf) | ((m[j + 4] & 0xf) << 4));
    }
}

inline int64_t padCols(int64_t cols) { return (cols + kPadCols - 1) / kPadCols * kPadCols; }

// Activations quantised to int8, one scale per 32 values (absmax/127). Layout
// per token (stride = colsPadded elements): qs[colsPadded], dx4[colsPadded/4]
// (the block scale repeated for each lane of 4 quants, so kernels load it as a
// vector), s16[colsPadded/16] = dx * sum of 16 quants. Padding is zero.
struct QuantActivations {
    int64_t tokens = 0;
    int64_t colsPadded = 0;
    const int8_t* qs = nullptr;
    const float* dx4 = nullptr;
    const float* s16 = nullptr;
    const float* s32 = nullptr;  // [tokens][colsPadded/32] = s16 pairs summed; only for panelRows, else nullptr
    // Distinct for every matmul call's activations (0: not set): a kernel that
    // rearranges them per call may keep its per-thread copy for the call's
    // other chunks.
    uint64_t serial = 0;
};

// A tile of weight rows in the intermediate form (kTileRows for intTile,
// kPanelRows inside panelRows). Layout per row (stride colsPadded): u[colsPadded],
// scale4[colsPadded/4], corr16[colsPadded/16].
// `signedU` marks Q8_0: u holds w + 128, which AVX2's saturating maddubs cannot
// take, so that path flips it back to signed. `scaleGroup`: the values that
// share one scale and one correction (32 for the 32-blocks, Q4_K and Q5_K;
// 16 for Q2_K, Q3_K, Q6_K), so a kernel may apply them once per group.
constexpr int kTileRows = 4;
constexpr int kPanelRows = 16;
// Rows one panelRows call takes: two panels, whose kernels may share each activation load.
constexpr int kPanelCallRows = 2 * kPanelRows;
struct UnpackedTile {
    int rows = 0;
    int64_t colsPadded = 0;
    uint8_t* u = nullptr;
    float* scale4 = nullptr;
    float* corr16 = nullptr;
    bool signedU = false;
    int scaleGroup = 16;
};

// Bytes of scratch an UnpackedTile of `rows` rows needs, 64-byte aligned pieces included.
size_t unpackedTileBytes(int64_t colsPadded, int rows = kTileRows);
UnpackedTile makeUnpackedTile(void* scratch, int64_t colsPadded, int rows = kTileRows);
// UnpackedTile::scaleGroup for a type with an integer path.
int scaleGroupOf(GgmlType type);

// Unpack rows [0, rows) of `w` (rowBytes apart) into `tile`. False for a type
// without an integer path.
bool unpackRows(GgmlType type, const uint8_t* w, size_t rowBytes, int rows, int64_t cols, UnpackedTile& tile);
bool hasIntegerPath(GgmlType type);
// The same, with AVX2 for the common formats (others go to unpackRows). Only
// call it after cpuid reported AVX2.
bool unpackRowsAvx2(GgmlType type, const uint8_t* w, size_t rowBytes, int rows, int64_t cols, UnpackedTile& tile);
// Zero the padding of row r past `cols` (zero weights and scales add nothing).
void padTileRow(UnpackedTile& tile, int r, int64_t cols);
// One row's unpacker: `blocks` blocks of w into the tile row's quants u, scale4 and corr16.
using UnpackRowFn = void (*)(const uint8_t* w, int64_t blocks, uint8_t* u, float* scale4, float* corr16);
// Rows [0, rows) of `w` (rowBytes apart, blocks of blockSize values of `type`) through
// fn into `tile`, padded (the loop unpackRows and unpackRowsAvx2 share).
void unpackRowsWith(UnpackRowFn fn, int blockSize, GgmlType type, const uint8_t* w, size_t rowBytes, int rows,
                    int64_t cols, UnpackedTile& tile);
using UnpackRowsFn = bool (*)(GgmlType, const uint8_t*, size_t, int, int64_t, UnpackedTile&);

// Quantise tokens [t0, t1) of x (cols apart) into the buffers of `act`.
void quantizeActivations(const float* x, int64_t cols, int64_t t0, int64_t t1, int8_t* qs, float* dx4, float* s16,
                         int64_t colsPadded);

// Per-ISA kernels.
// Integer: y[t * yStride + r] = sum_c w[r][c] x[t][c] for r < tile.rows, t < act.tokens.
using IntTileFn = void (*)(const UnpackedTile& tile, const QuantActivations& act, float* y, int64_t yStride);
// Float: w is `rows` float rows of `cols`; x is tokens float rows of `cols`.
using FloatTileFn = void (*)(const float* w, int rows, const float* x, int64_t tokens, int64_t cols, float* y,
                             int64_t yStride);
// Convert one row of F16/BF16 to float (F32 weights are used in place).
using ToFloatFn = void (*)(GgmlType type, const void* src, float* dst, int64_t n);

// One token, rows [0, rows) of w straight from the GGML blocks (no unpacked
// tile: with a single token the unpack would cost more than the product).
// Returns false for a type it does not handle; the caller then uses the tiles.
using RowsOneTokenFn = bool (*)(GgmlType type, const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols,
                                const QuantActivations& act, float* y);
// A few tokens (act.tokens, 1 .. the kernel's limit), rows [0, rows) of w
// straight from the GGML blocks, each weight block loaded once for all tokens:
// y[t * yStride + r]. Every token's outputs are bit for bit what a one-token
// call gives it. Returns false for a type or token count it does not handle.
using RowsFewTokensFn = bool (*)(GgmlType type, const uint8_t* w, size_t rowBytes, int64_t rows, int64_t cols,
                                 const QuantActivations& act, float* y, int64_t yStride);
// The same product for rows [0, rows) of w (rows <= kPanelCallRows) straight from
// the GGML blocks, unpacking as it needs; needs act.s32.
using PanelRowsFn = void (*)(GgmlType type, const uint8_t* w, size_t rowBytes, int rows, int64_t cols,
                             const QuantActivations& act, float* y, int64_t yStride);
using PanelRowsLanesFn = bool (*)(GgmlType type, const uint8_t* w, size_t rowBytes, int rows, int64_t cols,
                                  const QuantActivations& act, float* y, int64_t yStride);
using QuantizeActivationsFn = void (*)(const float* x, int64_t cols, int64_t t0, int64_t t1, int8_t* qs, float* dx4,
                                       float* s16, int64_t colsPadded);

struct IsaKernels {
    const char* name;
    UnpackRowsFn unpack;
    IntTileFn intTile;
    FloatTileFn floatTile;
    ToFloatFn toFloat;
    QuantizeActivationsFn quantize;
    RowsOneTokenFn rowsOneToken;  // may be nullptr
    PanelRowsFn panelRows;        // may be nullptr: 16-row panels for two or more tokens
    RowsFewTokensFn rowsFewTokens;  // may be nullptr: small decode batches (see matmul.cpp)
    // may be nullptr: panelRows for rows in the lanes layout (16 or 32 of them); false where it
    // cannot (the caller then restores GGML's blocks for panelRows)
    PanelRowsLanesFn panelRowsLanes;
};

// Past a token's cols up to colsPadded: zero quants, scales and sums, which add nothing
// to any product (every activation quantiser ends a row with this).
inline void zeroActivationPadding(int8_t* q, float* d4, float* s, int64_t cols, int64_t colsPadded) {
    std::memset(q + cols, 0, static_cast<size_t>(colsPadded - cols));
    std::fill(d4 + cols / 4, d4 + colsPadded / 4, 0.0f);
    std::fill(s + cols / 16, s + colsPadded / 16, 0.0f);
}

// AVX2 activation quantiser: the same values as quantizeActivations, bit for bit.
void quantizeActivationsAvx2(const float* x, int64_t cols, int64_t t0, int64_t t1, int8_t* qs, float* dx4, float* s16,
                             int64_t colsPadded);
// The blocks [c0, c1) of one token's row (xr, and that row's q, d4, s), the padding not
// touched: the AVX-512 quantiser's tail.
void quantizeActivationBlocksAvx2(const float* xr, int64_t c0, int64_t c1, int8_t* q, float* d4, float* s);
// AVX-512 activation quantiser (eight blocks at a time): the same values, bit for bit.
void quantizeActivationsAvx512(const float* x, int64_t cols, int64_t t0, int64_t t1, int8_t* qs, float* dx4,
                               float* s16, int64_t colsPadded);

const IsaKernels& scalarKernels();
const IsaKernels* avx2Kernels();    // nullptr when not compiled in
const IsaKernels* avx512Kernels();  // nullptr when not compiled in

}  // namespace kestrel::kernels
