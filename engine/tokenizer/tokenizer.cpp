// The parts of Tokenizer shared by every implementation, and StreamDecoder.
#include "tokenizer.h"

#include "byte_level.h"

#include <algorithm>

namespace kestrel {

const std::vector<std::string>& Tokenizer::warnings() const {
    static const std::vector<std::string> none;
    return none;
}

bool Tokenizer::isEndOfGeneration(TokenId id) const {
    const auto& eog = special().endOfGeneration;
    return std::binary_search(eog.begin(), eog.end(), id);
}

std::string Tokenizer::decode(std::span<const TokenId> ids, bool renderSpecial) const {
    std::string bytes;
    for (TokenId id : ids) bytes += tokenBytes(id, renderSpecial);
    std::string text;
    text.reserve(bytes.size());
    tokenizer::appendValidUtf8(bytes, text, /*final=*/true);
    return text;
}

std::string StreamDecoder::push(TokenId id) {
    pending_ += tokenizer_.tokenBytes(id, renderSpecial_);
    std::string text;
    const size_t used = tokenizer::appendValidUtf8(pending_, text, /*final=*/false);
    pending_.erase(0, used);
    return text;
}

std::string StreamDecoder::flush() {
    std::string text;
    tokenizer::appendValidUtf8(pending_, text, /*final=*/true);
    pending_.clear();
    return text;
}

}  // namespace kestrel
