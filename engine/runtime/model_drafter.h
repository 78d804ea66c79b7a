// Draft tokens for speculative decoding from a smaller model of the same
// vocabulary (GenerateParams::draft).
//
// Why: a model of a tenth of the size agrees with a large one on most tokens
// of ordinary text, and its step costs about a tenth; the large model checks
// several of its guesses in one step, which reads the weights once, as a step
// of one token does. The draft session follows the sequence the large model
// holds: each draft() feeds it the tokens it lacks (its KV of rejected guesses
// is dropped by the prefix reuse of Session::propose) and asks for its most
// likely continuation, ended early where its confidence drops below
// kMinProbability, since a guess the large model will likely reject costs a
// draft step and a verify row for nothing.
#pragma once

#include "drafter.h"

namespace kestrel {

class ModelDrafter final : public Drafter {
public:
    static constexpr float kMinProbability = 0.6f;

    // `draft` is used on this thread only, for as long as this drafter lives;
    // guesses at or beyond `targetVocab` end a draft.
    ModelDrafter(Session& draft, int32_t targetVocab) : draft_(draft), targetVocab_(targetVocab) {}

    void reset(std::span<const TokenId> history) override;
    void push(TokenId token) override { history_.push_back(token); }
    void draft(int max, std::vector<TokenId>& out) override;
    void checked(size_t, size_t) override {}

private:
    Session& draft_;
    int32_t targetVocab_;
    std::vector<TokenId> history_;
    bool failed_ = false;  // a draft step failed: no more guesses this reply
};

}  // namespace kestrel
