// Draft tokens for speculative decoding, looked up in the conversation itself
// ("prompt lookup decoding").
//
// Why: a reply often repeats what came before it (code being fixed, a text
// being rewritten or summarised, a list's pattern, a name), and a model writes
// such a stretch one token per step although the whole of it is predictable.
// When the last few tokens occurred earlier, the tokens that followed them
// then are a cheap guess at what follows now. The caller checks the guess in
// the same forward step as the next token (a step of a few tokens reads the
// weights once, as a step of one does) and keeps every drafted token the
// sampler draws anyway, so the reply is the one it would have been.
//
// How many tokens to guess adapts to how the guesses fare: a guess kept whole
// lengthens the next one by a token (up to the caller's limit), one whose first
// token missed halves it, so a reply that stopped following its context pays
// for short guesses only. Measured (SmolLM2, CPU, six chat prompts): limit 6
// with this rule 1.37-1.56x the tokens a second of plain decoding, greedy, and
// 1.20-1.22x at temperature 0.7; a fixed 4 gave 1.36-1.38x and 1.12x
// (docs/PERFORMANCE.md).
//
// The index maps every n-gram (n in [minNgram, maxNgram]) of the history to
// where it last ended, so push() and draft() cost O(maxNgram) whatever the
// history's length. The longest suffix n-gram with an earlier occurrence wins;
// its latest occurrence is taken (the nearest context is the likeliest).
#pragma once

#include "drafter.h"

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace kestrel {

class LookupDrafter final : public Drafter {
public:
    static constexpr int kMaxNgram = 4;
    // Suffixes of minNgram..maxNgram tokens are looked up (1 <= minNgram <= maxNgram <= kMaxNgram).
    explicit LookupDrafter(int minNgram = 2, int maxNgram = 3);

    void reset(std::span<const TokenId> history) override;
    void push(TokenId token) override;
    // Up to `max` (and the adaptive length) tokens that followed the latest
    // earlier occurrence of the longest suffix that has one; none when no suffix
    // occurred before. A match that runs into the present (a repeating
    // pattern) continues periodically.
    void draft(int max, std::vector<TokenId>& out) override;
    void checked(size_t guessed, size_t kept) override;

    const std::vector<TokenId>& history() const { return history_; }

private:
    uint64_t key(int64_t end, int n) const;  // the n tokens ending at history_[end]
    bool same(int64_t endA, int64_t endB, int n) const;

    int minNgram_, maxNgram_;
    int length_ = kMaxLength;  // the adaptive draft length
    static constexpr int kMaxLength = 64;
    std::vector<TokenId> history_;
    // Per n: n-gram key -> the index of its last token, for n-grams that have a successor.
    std::unordered_map<uint64_t, int64_t> lastEnd_[kMaxNgram + 1];
};

}  // namespace kestrel
