// The portable kernels: the same arithmetic as the SIMD paths (exact integer
// dots of the intermediate form, float scales), so they double as the
// reference for those paths' integer behaviour.
#include "fp16.h"
#include "matmul.h"
#include "quant_blocks.h"

namespace kestrel::kernels {
namespace {

void intTileScalar(const UnpackedTile& tile, const QuantActivations& act, float* y, int64_t yStride) {
    const int64_t cp = tile.colsPadded;
    for (int r = 0; r < tile.rows; ++r) {
        const uint8_t* u = tile.u + r * cp;
        const float* s4 = tile.scale4 + r * cp / 4;
        const float* c16 = tile.corr16 + r * cp / 16;
        for (int64_t t = 0; t < act.tokens; ++t) {
            const int8_t* q = act.qs + t * cp;
            const float* d4 = act.dx4 + t * cp / 4;
            const float* s16 = act.s16 + t * cp / 16;
            float acc = 0.0f;
            for (int64_t g = 0; g < cp / 4; ++g) {
                int dot = 0;
                for (int k = 0; k < 4; ++k) dot += u[g * 4 + k] * q[g * 4 + k];
                acc += s4[g] * d4[g] * static_cast<float>(dot);
            }
            for (int64_t g = 0; g < cp / 16; ++g) acc += c16[g] * s16[g];
            y[t * yStride + r] = acc;
        }
    }
}

void floatTileScalar(const float* w, int rows, const float* x, int64_t tokens, int64_t cols, float* y,
                     int64_t yStride) {
    for (int r = 0; r < rows; ++r)
        for (int64_t t = 0; t < tokens; ++t) {
            float acc = 0.0f;
            for (int64_t c = 0; c < cols; ++c) acc += w[r * cols + c] * x[t * cols + c];
            y[t * yStride + r] = acc;
        }
}

void toFloatScalar(GgmlType type, const void* src, float* dst, int64_t n) { dequantizeRow(type, src, dst, n); }

const IsaKernels kScalar{"scalar", unpackRows, intTileScalar, floatTileScalar, toFloatScalar, quantizeActivations, nullptr, nullptr, nullptr, nullptr};

}  // namespace

const IsaKernels& scalarKernels() { return kScalar; }

}  // namespace kestrel::kernels
