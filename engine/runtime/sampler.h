// The sampler chain of SamplingParams (see kestrel/sampling.h for the order).
//
// A Sampler is per-sequence state: its random generator advances with every
// draw, and penalties read the sequence's recent tokens, which the caller
// passes in. Not thread-safe; one per sequence. Allocation-free after the
// first call (buffers are reused), since it runs once per generated token.
#pragma once

#include "kestrel/sampling.h"
#include "tokenizer.h"
#include "top_logit.h"

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

    // How many of a row's best logits sampleTop needs to pick exactly what
    // sample() would: 1 for greedy and top-k for top-k sampling, plus one per
    // distinct penalised token (a penalty may push a token below one it beat).
    // 0: the whole row is needed (no top-k, or a penalty that raises logits).
    int32_t topNeeded(std::span<const TokenId> history);

    // sample() on a row of which only `top` is known: its topNeeded(history)
    // best logits (ties: lower id first), in any order. Same draw, same token.
    TokenId sampleTop(std::span<const TopLogit> top, std::span<const TokenId> history);

    // The seed actually used (a random one when params.seed == 0).
    uint64_t seed() const { return seed_; }

private:
    using Candidate = TopLogit;
    bool penalising(std::span<const TokenId> history) const;
    // counts_ = (id, occurrences) in the penalty window, sorted by id; ids >= vocab are skipped.
    void countWindow(std::span<const TokenId> history, size_t vocab);
    float penalised(float logit, int32_t count) const;
    void applyPenalties(std::span<float> logits, std::span<const TokenId> history);
    // The chain after the penalties (greedy or top-k, top-p, min-p, temperature, draw) on candidates_.
    TokenId choose();

    SamplingParams params_;
    uint64_t seed_;
    Rng rng_;
    std::vector<Candidate> candidates_;
    std::vector<float> probs_;
    std::vector<std::pair<TokenId, int32_t>> counts_;
};

// Argmax with the lowest id winning ties (greedy decoding; kernels::argmaxRow).
TokenId argmax(std::span<const float> logits);

}  // namespace kestrel
