// The GGML tensor types that GGUF files name, with their block geometry.
//
// Shared by the GGUF reader (to validate sizes) and the kernels (to pick a
// dot product). Ids are the on-disk values of ggml's `enum ggml_type`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kestrel {

enum class GgmlType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ2_XXS = 16,
    IQ2_XS = 17,
    IQ3_XXS = 18,
    IQ1_S = 19,
    IQ4_NL = 20,
    IQ3_S = 21,
    IQ2_S = 22,
    IQ4_XS = 23,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    IQ1_M = 29,
    BF16 = 30,
    TQ1_0 = 34,
    TQ2_0 = 35,
};

struct GgmlTypeTraits {
    GgmlType type;
    std::string_view name;   // "Q4_K"
    uint32_t blockSize;      // elements per block (1 for plain types)
    uint32_t blockBytes;     // bytes per block
    bool computeSupported;   // Kestrel can dequantise it and multiply with it
};

// Traits of a type id read from a file; nullopt for ids ggml never defined.
std::optional<GgmlTypeTraits> ggmlTypeTraits(uint32_t id);
inline std::optional<GgmlTypeTraits> ggmlTypeTraits(GgmlType t) { return ggmlTypeTraits(static_cast<uint32_t>(t)); }

// Bytes of one row of `elements` values; nullopt if `elements` is not a whole
// number of blocks or the type is unknown.
std::optional<uint64_t> ggmlRowBytes(GgmlType type, uint64_t elements);

std::string_view ggmlTypeName(GgmlType type);

}  // namespace kestrel
