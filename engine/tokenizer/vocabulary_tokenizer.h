// What every vocabulary-backed tokenizer shares: the token table (texts,
// kinds, the bytes each token decodes to, lookup by text), the special
// tokens and the warnings. BpeTokenizer and SpmTokenizer fill it in create()
// and add only their encoding.
#pragma once

#include "tokenizer.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace kestrel::tokenizer {

class VocabularyTokenizer : public Tokenizer {
public:
    std::string tokenBytes(TokenId id, bool renderSpecial = false) const override;
    std::string_view tokenText(TokenId id) const override;
    TokenKind tokenKind(TokenId id) const override;
    std::optional<TokenId> findToken(std::string_view text) const override;
    int32_t vocabSize() const override { return int32_t(tokens_.size()); }
    const SpecialTokens& special() const override { return special_; }
    const std::vector<std::string>& warnings() const override { return warnings_; }

protected:
    std::vector<std::string> tokens_;
    std::vector<TokenKind> kinds_;
    std::vector<std::string> bytes_;  // what each token decodes to, computed once
    std::unordered_map<std::string_view, TokenId> byText_;  // views into tokens_
    SpecialTokens special_;
    std::vector<std::string> warnings_;
};

}  // namespace kestrel::tokenizer
