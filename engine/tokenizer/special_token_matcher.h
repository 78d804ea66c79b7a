// Finds special tokens (control and user-defined vocabulary entries such as
// "<|im_start|>") in text, so that they become single tokens and the text
// around them is tokenized on its own.
//
// Matching is leftmost, then longest (as Hugging Face's added-token splitter):
// at each position the longest token that starts there wins.
//
// Thread-safety: immutable after construction; split() is safe from many threads.
#pragma once

#include "tokenizer.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace kestrel::tokenizer {

struct TextSegment {
    std::string_view text;  // empty when `token` is set
    TokenId token = -1;     // a matched special token, or -1 for plain text
};

class SpecialTokenMatcher {
public:
    struct Entry {
        std::string text;
        TokenId id;
        bool alwaysMatched;  // user-defined tokens are vocabulary, matched even in user content
    };

    SpecialTokenMatcher() = default;
    explicit SpecialTokenMatcher(std::vector<Entry> entries);

    // Splits `text` into plain-text segments and special tokens. Entries that
    // are not alwaysMatched are only recognised when parseSpecial.
    void split(std::string_view text, bool parseSpecial, std::vector<TextSegment>& out) const;

    bool empty() const { return entries_.empty(); }

private:
    std::vector<Entry> entries_;  // longest first
    // Indices into entries_ by first byte, longest first, so a scan position
    // only tries the tokens that could start there.
    std::array<std::vector<uint32_t>, 256> byFirstByte_;
    bool anyAlwaysMatched_ = false;
};

}  // namespace kestrel::tokenizer
