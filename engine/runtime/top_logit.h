// The best logits of a row: what a backend returns instead of the whole row
// when the sampler needs only those (Sampler::topNeeded).
#pragma once

#include <cstdint>
#include <span>

namespace kestrel {

struct TopLogit {
    float logit;
    int32_t id;
};

// Higher logit first, lower id first among equals (argmax's and top-k's order).
inline bool outranks(const TopLogit& a, const TopLogit& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// How many best logits a step should return for a sampler that needs `need`
// (Sampler::topNeeded): `need`, or 0 (whole rows) when it needs the whole row,
// more than the vocabulary, or so many that whole rows cost about as much.
inline int32_t topLogitsFor(int32_t need, int32_t vocab) {
    constexpr int32_t kMostWorthIt = 256;
    return need > 0 && need <= kMostWorthIt && need <= vocab ? need : 0;
}

// The k best of `row` into out[0..k) in rank order (k <= row.size()): the host
// reference for backends' selections.
void selectTop(std::span<const float> row, int32_t k, std::span<TopLogit> out);

}  // namespace kestrel
