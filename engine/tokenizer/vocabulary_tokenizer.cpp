#include "vocabulary_tokenizer.h"

namespace kestrel::tokenizer {

std::string VocabularyTokenizer::tokenBytes(TokenId id, bool renderSpecial) const {
    if (id < 0 || id >= vocabSize()) return {};
    switch (kinds_[id]) {
    case TokenKind::Normal:
    case TokenKind::Byte:
    case TokenKind::UserDefined:
        return bytes_[id];
    default:
        return renderSpecial ? bytes_[id] : std::string();
    }
}

std::string_view VocabularyTokenizer::tokenText(TokenId id) const {
    if (id < 0 || id >= vocabSize()) return {};
    return tokens_[id];
}

TokenKind VocabularyTokenizer::tokenKind(TokenId id) const {
    if (id < 0 || id >= vocabSize()) return TokenKind::Unused;
    return kinds_[id];
}

std::optional<TokenId> VocabularyTokenizer::findToken(std::string_view text) const {
    const auto it = byText_.find(text);
    if (it == byText_.end()) return std::nullopt;
    return it->second;
}

}  // namespace kestrel::tokenizer
