// Host-side repacking of GGUF quantised rows into the CUDA kernels' layouts
// (see kernels/cuda/gemv.cuh): every 32 values become one block of quants in
// one array and its scales in another.
//
// The kernels know four integer layouts; the GGUF types map onto them:
//   Q4_0 -> Q4_0, Q8_0 -> Q8_0                       (copies)
//   Q4_1, Q4_K -> Q4_1   (Q4_K: each 32-value sub-block's d*sc and -dmin*m)
//   Q5_0 -> Q8_0         (the 5-bit codes minus 16 as int8)
//   Q5_1, Q5_K, Q6_K -> Q8_16 (int8 codes, a scale per 16 values, a min)
// Codes are exact. Scales that GGUF keeps as f16 stay exact; the K-quants'
// products of an f16 super-block scale with a 6- or 8-bit sub-block scale are
// rounded to f16 (relative error <= 2^-11, far below the int8 activations' own).
// Other types (Q2_K, Q3_K, floats) have no integer layout: the caller
// dequantises them to F16.
#pragma once

#include "gemv.cuh"  // kernels/cuda: DevFormat
#include "ggml_types.h"  // kernels: GgmlType

#include <cstdint>
#include <optional>

namespace kestrel::backend::cudaimpl {

struct DeviceLayout {
    cuda::DevFormat format;
    int qsBytes;     // per 32 values
    int scaleBytes;  // per 32 values
};

// The integer layout rows of `type` are repacked into, if any.
std::optional<DeviceLayout> deviceLayoutFor(GgmlType type);

// Rows [r0, r1) of a `cols`-wide matrix of `type` at `src` (GGUF row-major) into
// qs and scales, both indexed from row 0. Requires deviceLayoutFor(type).
// Thread-safe for disjoint row ranges.
void repackRows(GgmlType type, const uint8_t* src, int64_t cols, int64_t r0, int64_t r1, uint8_t* qs,
                uint8_t* scales);

}  // namespace kestrel::backend::cudaimpl
