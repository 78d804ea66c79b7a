// The integer device formats of gemv.cuh, for the kernels: a dispatch from the
// run-time format to a compile-time one, and each format's bytes per 32-value
// block (quants and scales live in two arrays). Included by .cu files only.
#pragma once

#include "gemv.cuh"

#include <type_traits>

namespace kestrel::cuda {

// fn(std::integral_constant<DevFormat, F>{}) for the integer formats; F16 does nothing.
template <typename Fn>
void forIntegerFormat(DevFormat format, Fn&& fn) {
    switch (format) {
    case DevFormat::Q4_0: fn(std::integral_constant<DevFormat, DevFormat::Q4_0>{}); break;
    case DevFormat::Q4_1: fn(std::integral_constant<DevFormat, DevFormat::Q4_1>{}); break;
    case DevFormat::Q8_0: fn(std::integral_constant<DevFormat, DevFormat::Q8_0>{}); break;
    case DevFormat::Q8_16: fn(std::integral_constant<DevFormat, DevFormat::Q8_16>{}); break;
    case DevFormat::F16: break;
    }
}

__host__ __device__ constexpr int quantBytesOf(DevFormat f) { return f == DevFormat::Q8_0 || f == DevFormat::Q8_16 ? 32 : 16; }
__host__ __device__ constexpr int scaleBytesOf(DevFormat f) { return f == DevFormat::Q8_16 ? 8 : f == DevFormat::Q4_1 ? 4 : 2; }
template <DevFormat F>
__host__ __device__ constexpr int quantBytes() { return quantBytesOf(F); }
template <DevFormat F>
__host__ __device__ constexpr int scaleBytes() { return scaleBytesOf(F); }

}  // namespace kestrel::cuda
