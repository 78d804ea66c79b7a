// spmVocabularyFromGguf: the tokenizer.ggml.* keys of a "llama" (SentencePiece) file.
#include "gguf_file.h"
#include "gguf_vocab_keys.h"
#include "spm_tokenizer.h"

namespace kestrel::tokenizer {

using gguf::GgufFile;

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

    if (Status st = readTokenKinds(file, v.kinds); !st.isOk()) return st;
    if (Status st = readSpecialIds(file, v.special, v.eom); !st.isOk()) return st;
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
