// The sampler chain of SamplingParams (see kestrel/sampling.h for the order).
//
// A Sampler is per-sequence state: its random generator advances with every
// draw, and penalties read the sequence's recent tokens, which the caller
// passes in. Not thread-safe; one per sequence. Allocation-free after the
// first call (buffers are reused), since it runs once per generated token.
#pragma once

#include "kestrel/sampling.h"
#include "tokenizer.h"

#include <cstdint>
#include <span>
#include <vector>

namespace kestrel {

// xoshiro256** seeded by splitmix64: fast, and the same sequence on every
// platform and standard library (std::uniform_real_distribution is not).
class Rng {
public:
    explicit Rng(uint64_t seed);
    uint64_t next();
    double uniform();  // [0, 1)

private:
    uint64_t s_[4];
};

class Sampler {
public:
    explicit Sampler(const SamplingParams& params);

    const SamplingParams& params() const { return params_; }

    // Picks the next token from `logits` (vocab-sized; modified in place by
    // the penalties). `history` is the sequence so far (prompt + reply).
    TokenId sample(std::span<float> logits, std::span<const TokenId> history);

    // The seed actually used (a random one when params.seed == 0).
    uint64_t seed() const { return seed_; }

private:
    struct Candidate {
        float logit;
        TokenId id;
    };
    void applyPenalties(std::span<float> logits, std::span<const TokenId> history);

    SamplingParams params_;
    uint64_t seed_;
    Rng rng_;
    std::vector<Candidate> candidates_;
    std::vector<float> probs_;
    std::vector<std::pair<TokenId, int32_t>> counts_;
};

// Argmax with the lowest id winning ties: the reference for greedy decoding.
TokenId argmax(std::span<const float> logits);

}  // namespace kestrel
