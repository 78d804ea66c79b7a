// Internal to kernels/cpu: a decode GEMV call's int8 activations rearranged
// into the lane order of the lanes layout (lanes_layout.h), so each weight
// vector of a group pairs with one plain activation vector. Shared by the
// AVX-512 and AVX2 lanes GEMVs (gemv_lanes_avx512.cpp, gemv_lanes_avx2.cpp),
// which read the same bytes; no ISA-specific code here.
#pragma once

#include "lanes_layout.h"
#include "quant_blocks.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace kestrel::kernels {

// Per group of B slots (L = 16 / B lanes per block), in this order:
//   B / 2 vectors of 64 bytes: vector k, lane l holds quant dword
//     (l / L) * 8 + k * L + l % L of the group's blocks (zero for absent blocks;
//     the AVX-512 GEMV's own preparation repeats lanes 0-7 in 8-15 for a 4-slot
//     group of 1-2 blocks, where it keeps a row pair's second row).
//     Weight vectors pair with them as: Q8_0 vector v with k = v; nibble vector
//     v's low halves with k = v, its high halves with k = B / 4 + v.
//   16 floats: each lane's block scale.
//   16 int32: each lane's sum of its quants (for the zero points of Q4_0 and Q8_0).
//   16 floats: each lane's scale times its sum, float(sum) * dx (Q4_1's minimum
//     term), made once per call: a GEMV multiplies it by every row pair's
//     minima, and computing it there cost two vector operations per token and
//     group, ~8 % of a 4-token product of 576-wide rows.
constexpr int lanesActivationVectors(int slots) { return slots / 2; }
constexpr int lanesActivationGroupBytes(int slots) { return lanesActivationVectors(slots) * 64 + 192; }
// Offsets in a group's bytes of the scales, the sums and the scaled sums.
constexpr int lanesScalesAt(int slots) { return lanesActivationVectors(slots) * 64; }
constexpr int lanesSumsAt(int slots) { return lanesScalesAt(slots) + 64; }
constexpr int lanesScaledSumsAt(int slots) { return lanesScalesAt(slots) + 128; }

// One call's activations in lane order, all tokens; token t starts t * tokenBytes in.
struct LanesActivations {
    std::vector<unsigned char> storage;
    const unsigned char* base = nullptr;  // 64-byte aligned
    size_t tokenBytes = 0;
    uint64_t serial = 0;  // QuantActivations::serial of the call it was prepared for
    int64_t nb = 0;
};

// One group's bytes from the natural order: qs and dx4 at the group's first
// block, `blocks` of `slots` present.
using PrepareLanesGroupFn = void (*)(const int8_t* qs, const float* dx4, int slots, int blocks, unsigned char* out);
void prepareLanesGroupPortable(const int8_t* qs, const float* dx4, int slots, int blocks, unsigned char* out);

// Fills `out` for act (nb blocks per token) with `group`, unless it already
// holds this call's activations (a call is split into row chunks per thread).
void prepareLanesActivations(const QuantActivations& act, int64_t nb, LanesActivations& out, PrepareLanesGroupFn group);

// This thread's copy.
LanesActivations& lanesActivationScratch();

// What both lanes GEMVs share around their kernels (templates over the
// caller's lambdas, so each ISA file instantiates its own):
constexpr int kLanesTokensPerPass = 4;   // tokens applied to a row's decoded group in turn

// A lanes GEMV call's dispatch: fn(std::integral_constant<GgmlType, T>{}) for a type in
// the lanes layout and 1..kLanesMaxTokens tokens; false (nothing run) otherwise.
template <typename Fn>
bool withLanesCall(GgmlType type, int64_t tokens, Fn&& fn) {
    if (tokens < 1 || tokens > kLanesMaxTokens) return false;
    switch (type) {
    case GgmlType::Q4_0: fn(std::integral_constant<GgmlType, GgmlType::Q4_0>{}); return true;
    case GgmlType::Q4_1: fn(std::integral_constant<GgmlType, GgmlType::Q4_1>{}); return true;
    case GgmlType::Q5_0: fn(std::integral_constant<GgmlType, GgmlType::Q5_0>{}); return true;
    case GgmlType::Q4_K: fn(std::integral_constant<GgmlType, GgmlType::Q4_K>{}); return true;
    case GgmlType::Q8_0: fn(std::integral_constant<GgmlType, GgmlType::Q8_0>{}); return true;
    default: return false;
    }
}

// Tokens [0, tokens) in passes of up to kLanesTokensPerPass: fn(std::integral_constant<int, T>{}, t0).
template <typename Fn>
void forLanesTokenPasses(int64_t tokens, Fn&& fn) {
    for (int64_t t0 = 0; t0 < tokens; t0 += kLanesTokensPerPass) {
        switch (std::min<int64_t>(kLanesTokensPerPass, tokens - t0)) {
        case 4: fn(std::integral_constant<int, 4>{}, t0); break;
        case 3: fn(std::integral_constant<int, 3>{}, t0); break;
        case 2: fn(std::integral_constant<int, 2>{}, t0); break;
        default: fn(std::integral_constant<int, 1>{}, t0); break;
        }
    }
}

}  // namespace kestrel::kernels
