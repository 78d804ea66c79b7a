#include "ggml_types.h"

#include <array>

namespace kestrel {
namespace {

constexpr std::array kTraits = {
    GgmlTypeTraits{GgmlType::F32, "F32", 1, 4, true},
    GgmlTypeTraits{GgmlType::F16, "F16", 1, 2, true},
    GgmlTypeTraits{GgmlType::Q4_0, "Q4_0", 32, 18, true},
    GgmlTypeTraits{GgmlType::Q4_1, "Q4_1", 32, 20, true},
    GgmlTypeTraits{GgmlType::Q5_0, "Q5_0", 32, 22, true},
    GgmlTypeTraits{GgmlType::Q5_1, "Q5_1", 32, 24, true},
    GgmlTypeTraits{GgmlType::Q8_0, "Q8_0", 32, 34, true},
    GgmlTypeTraits{GgmlType::Q8_1, "Q8_1", 32, 36, false},
    GgmlTypeTraits{GgmlType::Q2_K, "Q2_K", 256, 84, true},
    GgmlTypeTraits{GgmlType::Q3_K, "Q3_K", 256, 110, true},
    GgmlTypeTraits{GgmlType::Q4_K, "Q4_K", 256, 144, true},
    GgmlTypeTraits{GgmlType::Q5_K, "Q5_K", 256, 176, true},
    GgmlTypeTraits{GgmlType::Q6_K, "Q6_K", 256, 210, true},
    GgmlTypeTraits{GgmlType::Q8_K, "Q8_K", 256, 292, false},
    GgmlTypeTraits{GgmlType::IQ2_XXS, "IQ2_XXS", 256, 66, false},
    GgmlTypeTraits{GgmlType::IQ2_XS, "IQ2_XS", 256, 74, false},
    GgmlTypeTraits{GgmlType::IQ3_XXS, "IQ3_XXS", 256, 98, false},
    GgmlTypeTraits{GgmlType::IQ1_S, "IQ1_S", 256, 50, false},
    GgmlTypeTraits{GgmlType::IQ4_NL, "IQ4_NL", 32, 18, false},
    GgmlTypeTraits{GgmlType::IQ3_S, "IQ3_S", 256, 110, false},
    GgmlTypeTraits{GgmlType::IQ2_S, "IQ2_S", 256, 82, false},
    GgmlTypeTraits{GgmlType::IQ4_XS, "IQ4_XS", 256, 136, false},
    GgmlTypeTraits{GgmlType::I8, "I8", 1, 1, false},
    GgmlTypeTraits{GgmlType::I16, "I16", 1, 2, false},
    GgmlTypeTraits{GgmlType::I32, "I32", 1, 4, false},
    GgmlTypeTraits{GgmlType::I64, "I64", 1, 8, false},
    GgmlTypeTraits{GgmlType::F64, "F64", 1, 8, false},
    GgmlTypeTraits{GgmlType::IQ1_M, "IQ1_M", 256, 56, false},
    GgmlTypeTraits{GgmlType::BF16, "BF16", 1, 2, true},
    GgmlTypeTraits{GgmlType::TQ1_0, "TQ1_0", 256, 54, false},
    GgmlTypeTraits{GgmlType::TQ2_0, "TQ2_0", 256, 66, false},
};

}  // namespace

std::optional<GgmlTypeTraits> ggmlTypeTraits(uint32_t id) {
    for (const auto& t : kTraits)
        if (static_cast<uint32_t>(t.type) == id) return t;
    return std::nullopt;
}

std::optional<uint64_t> ggmlRowBytes(GgmlType type, uint64_t elements) {
    auto traits = ggmlTypeTraits(type);
    if (!traits || elements % traits->blockSize != 0) return std::nullopt;
    return elements / traits->blockSize * traits->blockBytes;
}

std::string_view ggmlTypeName(GgmlType type) {
    auto traits = ggmlTypeTraits(type);
    return traits ? traits->name : std::string_view("unknown");
}

}  // namespace kestrel
