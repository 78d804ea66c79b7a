// spmVocabularyFromGguf: the tokenizer.ggml.* keys of a "llama" (SentencePiece) file.
#include "gguf_file.h"
#include "spm_tokenizer.h"

namespace kestrel::tokenizer {
namespace {

using gguf::GgufFile;

Result<TokenId> optionalId(const GgufFile& file, std::string_view key) {
    if (!file.find(key)) return TokenId(-1);
    auto v = file.getInt(key);
    if (!v) return v.status();
    if (*v < 0 || *v > INT32_MAX) return TokenId(-1);  // -1 / UINT32_MAX mean "none"
    return TokenId(*v);
}

Result<bool> optionalBool(const GgufFile& file, std::string_view key, bool fallback) {
    if (!file.find(key)) return fallback;
    return file.getBool(key);
}

}  // namespace

Result<SpmVocabulary> spmVocabularyFromGguf(const GgufFile& file) {
    SpmVocabulary v;
    v.where = file.where();
    auto tokens = file.getStringArray("tokenizer.ggml.tokens");
    if (!tokens) return tokens.status();
    v.tokens.assign(tokens->begin(), tokens->end());

    // SentencePiece BPE merges by score; without scores every merge ties and
    // the result would be silently wrong, so refuse.
    if (!file.find("tokenizer.ggml.scores"))
        return Status(ErrorCode::InvalidFile, file.where() + "tokenizer.ggml.scores is missing; a 'llama' "
                                                             "(SentencePiece) tokenizer needs its scores");
    auto scores = file.getFloatArray("tokenizer.ggml.scores");
    if (!scores) return scores.status();
    v.scores.assign(scores->begin(), scores->end());

    if (file.find("tokenizer.ggml.token_type")) {
        auto types = file.getIntArray("tokenizer.ggml.token_type");
        if (!types) return types.status();
        v.kinds.reserve(types->size());
        for (int64_t t : *types) v.kinds.push_back(t >= 1 && t <= 6 ? TokenKind(t) : TokenKind::Normal);
    }

    struct IdKey { TokenId* dst; const char* key; };
    for (auto [dst, key] : {IdKey{&v.special.bos, "tokenizer.ggml.bos_token_id"},
                            IdKey{&v.special.eos, "tokenizer.ggml.eos_token_id"},
                            IdKey{&v.special.eot, "tokenizer.ggml.eot_token_id"},
                            IdKey{&v.special.unk, "tokenizer.ggml.unknown_token_id"},
                            IdKey{&v.special.pad, "tokenizer.ggml.padding_token_id"},
                            IdKey{&v.eom, "tokenizer.ggml.eom_token_id"}}) {
        auto id = optionalId(file, key);
        if (!id) return id.status();
        *dst = *id;
    }
    // SentencePiece models add BOS unless told otherwise (llama.cpp's default too).
    struct BoolKey { bool* dst; const char* key; bool fallback; };
    for (auto [dst, key, fallback] : {BoolKey{&v.special.addBos, "tokenizer.ggml.add_bos_token", true},
                                      BoolKey{&v.special.addEos, "tokenizer.ggml.add_eos_token", false},
                                      BoolKey{&v.addSpacePrefix, "tokenizer.ggml.add_space_prefix", true},
                                      BoolKey{&v.removeExtraWhitespaces, "tokenizer.ggml.remove_extra_whitespaces", false}}) {
        auto b = optionalBool(file, key, fallback);
        if (!b) return b.status();
        *dst = *b;
    }

    if (file.find("tokenizer.ggml.precompiled_charsmap")) {
        auto map = file.getIntArray("tokenizer.ggml.precompiled_charsmap");
        if (!map) return map.status();
        v.precompiledCharsmap.reserve(map->size());
        for (int64_t b : *map) v.precompiledCharsmap.push_back(char(uint8_t(b)));
    }
    return v;
}

}  // namespace kestrel::tokenizer
