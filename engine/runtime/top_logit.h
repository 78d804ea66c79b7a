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

// The k best of `row` into out[0..k) in rank order (k <= row.size()): the host
// reference for backends' selections.
void selectTop(std::span<const float> row, int32_t k, std::span<TopLogit> out);

}  // namespace kestrel
