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
    struct IdKey {
        TokenId* dst;
        const char* key;
    };
    for (auto [dst, key] : {IdKey{&special.bos, "tokenizer.ggml.bos_token_id"},
                            IdKey{&special.eos, "tokenizer.ggml.eos_token_id"},
                            IdKey{&special.eot, "tokenizer.ggml.eot_token_id"},
                            IdKey{&special.unk, "tokenizer.ggml.unknown_token_id"},
                            IdKey{&special.pad, "tokenizer.ggml.padding_token_id"},
                            IdKey{&eom, "tokenizer.ggml.eom_token_id"}}) {
        auto id = optionalId(file, key);
        if (!id) return id.status();
        *dst = *id;
    }
    return Status::ok();
}

}  // namespace kestrel::tokenizer
