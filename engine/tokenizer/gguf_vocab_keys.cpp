#include "gguf_vocab_keys.h"

namespace kestrel::tokenizer {
namespace {

Result<TokenId> optionalId(const gguf::GgufFile& file, std::string_view key) {
    if (!file.find(key)) return TokenId(-1);
    auto v = file.getInt(key);
    if (!v) return v.status();
    if (*v < 0 || *v > INT32_MAX) return TokenId(-1);
    return TokenId(*v);
}

}  // namespace

Result<bool> optionalBool(const gguf::GgufFile& file, std::string_view key, bool fallback) {
    if (!file.find(key)) return fallback;
    return file.getBool(key);
}

Status readTokenKinds(const gguf::GgufFile& file, std::vector<TokenKind>& kinds) {
    if (!file.find("tokenizer.ggml.token_type")) return Status::ok();
    auto types = file.getIntArray("tokenizer.ggml.token_type");
    if (!types) return types.status();
    kinds.reserve(types->size());
    for (int64_t t : *types) kinds.push_back(t >= 1 && t <= 6 ? TokenKind(t) : TokenKind::Normal);
    return Status::ok();
}

Status readSpecialIds(const gguf::GgufFile& file, SpecialTokens& special, TokenId& eom) {
    Status st;
    forEachSpecialId(special, eom, [&](TokenId& id, const char* key) {
        if (!st.isOk()) return;
        auto value = optionalId(file, std::string("tokenizer.ggml.") + key);
        if (value) id = *value;
        else st = value.status();
    });
    return st;
}

void dropSpecialIdsOutside(SpecialTokens& special, TokenId& eom, int64_t n, const std::string& where,
                           std::vector<std::string>& warnings) {
    forEachSpecialId(special, eom, [&](TokenId& id, const char* key) {
        if (id >= n || id < -1) {
            warnings.push_back(where + "tokenizer.ggml." + key + " = " + std::to_string(id) +
                               " is outside the vocabulary (" + std::to_string(n) + " tokens); ignored");
            id = -1;
        }
    });
}

}  // namespace kestrel::tokenizer
