// Internal to kernels/cpu: storage of one prefill panel (gemm_panel_avx512.cpp,
// gemm_panel_avx2.cpp): kPanelRows rows interleaved in 4-column words,
// q[c / 4][row][4], then per scale group g of the row: scale[g][row] and
// corr[g][row]. In an unnamed namespace, as lanes_factors_avx512.h, so each file
// keeps its own copy (and its own per-thread buffer) built with its own ISA flags.
#pragma once

#include "quant_blocks.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace kestrel::kernels {
namespace {

struct PanelStorage {
    uint8_t* q;
    float* scale;
    float* corr;
};

// This thread's storage for a panel of cp columns in groups of g (64-byte aligned);
// `slot` 0 or 1, for the two panels of one call.
inline PanelStorage panelStorage(int64_t cp, int g, int slot = 0) {
    thread_local std::vector<unsigned char> slots[2];
    std::vector<unsigned char>& storage = slots[slot];
    const size_t qBytes = static_cast<size_t>(cp) * kPanelRows;
    const size_t need = qBytes + 2 * static_cast<size_t>(cp / g) * kPanelRows * sizeof(float) + 64;
    if (storage.size() < need) storage.resize(need);
    auto* q = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(storage.data()) + 63) / 64 * 64);
    auto* scale = reinterpret_cast<float*>(q + qBytes);
    return PanelStorage{q, scale, scale + cp / g * kPanelRows};
}

// A 32-value-block panel's blocks nb .. cp / 32 - 1, the padding to whole groups:
// zero weights, zero scales and corrections.
inline void zeroPadding(const PanelStorage& p, int64_t nb, int64_t cp) {
    for (int64_t b = nb; b < cp / kQK; ++b) {
        std::memset(p.q + b * kQK * kPanelRows, 0, kQK * kPanelRows);
        std::memset(p.scale + b * kPanelRows, 0, kPanelRows * sizeof(float));
        std::memset(p.corr + b * kPanelRows, 0, kPanelRows * sizeof(float));
    }
}

// The panel's scales and corrections from an unpacked tile: row r's group scales are
// every (g/4)-th of its scale4, its corrections every (g/16)-th of its corr16; rows
// past tile.rows get zeros.
inline void panelFactorsFromTile(const UnpackedTile& tile, const PanelStorage& p) {
    const int64_t cp = tile.colsPadded;
    const int g = tile.scaleGroup;
    const int64_t groups = cp / g;
    if (tile.rows < kPanelRows) {
        std::memset(p.scale, 0, static_cast<size_t>(groups) * kPanelRows * sizeof(float));
        std::memset(p.corr, 0, static_cast<size_t>(groups) * kPanelRows * sizeof(float));
    }
    for (int r = 0; r < tile.rows; ++r) {
        const float* s4 = tile.scale4 + r * cp / 4;
        const float* c16 = tile.corr16 + r * cp / 16;
        for (int64_t k = 0; k < groups; ++k) {
            p.scale[k * kPanelRows + r] = s4[k * g / 4];
            p.corr[k * kPanelRows + r] = c16[k * g / 16];
        }
    }
}

}  // namespace
}  // namespace kestrel::kernels
