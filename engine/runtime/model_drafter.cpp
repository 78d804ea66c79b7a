#include "model_drafter.h"

#include <algorithm>
#include <cstdlib>

namespace kestrel {

void ModelDrafter::reset(std::span<const TokenId> history) {
    history_.assign(history.begin(), history.end());
    failed_ = false;
}

namespace {

// KESTREL_DRAFT_MIN_P overrides kMinProbability (to measure: 0 makes the draft
// guess its full length whatever its confidence, as random-weight models need).
float minProbability() {
    static const float p = [] {
        const char* v = std::getenv("KESTREL_DRAFT_MIN_P");
        return v ? std::strtof(v, nullptr) : ModelDrafter::kMinProbability;
    }();
    return p;
}

}  // namespace

void ModelDrafter::draft(int max, std::vector<TokenId>& out) {
    out.clear();
    if (failed_ || max <= 0) return;
    auto proposed = draft_.propose(history_, max, minProbability());
    if (!proposed) {
        // Drafting is only ever a shortcut: the reply goes on without it (a token
        // the draft's vocabulary lacks, its context full, its memory short).
        failed_ = true;
        return;
    }
    for (TokenId id : proposed.value()) {
        if (id >= targetVocab_) break;
        out.push_back(id);
    }
}

Status draftCompatible(const Model& target, const Model& draft) {
    const int32_t a = target.info().vocabSize, b = draft.info().vocabSize;
    // Models of one family may pad their vocabularies differently; the shared
    // ids must mean the same text (llama.cpp allows the same 128 of padding).
    constexpr int32_t kMaxPadding = 128;
    if (std::abs(a - b) > kMaxPadding)
        return Status(ErrorCode::InvalidArgument, "the draft model's vocabulary (" + std::to_string(b) +
                                                      " tokens) is not the model's (" + std::to_string(a) + " tokens)");
    for (TokenId id = 0; id < std::min(a, b); ++id)
        if (target.tokenText(id) != draft.tokenText(id))
            return Status(ErrorCode::InvalidArgument, "the draft model's vocabulary differs from the model's at token " +
                                                          std::to_string(id) + " (\"" + draft.tokenText(id) +
                                                          "\" against \"" + target.tokenText(id) + "\")");
    return Status::ok();
}

int64_t draftKvPoolTokens(int32_t contextLength) {
    constexpr int64_t kGuessRoom = 256;  // the draft holds the history and its guesses past it
    return int64_t(contextLength) + kGuessRoom;
}

}  // namespace kestrel
