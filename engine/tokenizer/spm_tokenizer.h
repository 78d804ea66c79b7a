// SentencePiece vocabularies (GGUF `tokenizer.ggml.model` = "llama"): Llama 1/2,
// Mistral v0.1-0.3, Gemma 1-3, Phi-3, TinyLlama... The encoding itself is
// libsentencepiece's: the GGUF vocabulary becomes a ModelProto
// (sentencepiece_proto.h) loaded with LoadFromSerializedProto.
//
// How the GGUF vocabulary maps onto the ModelProto:
//  - model type BPE, as for every "llama" vocabulary llama.cpp reads (merges
//    are chosen by the score of the merged piece); byte_fallback when the
//    vocabulary has byte tokens <0x00>..<0xFF>.
//  - normalizer "identity" (no charsmap), escape_whitespaces on (" " -> "▁"),
//    remove_extra_whitespaces off. The dummy prefix (tokenizer.ggml.add_space_prefix,
//    default true) is added here, not by sentencepiece: one "▁" before the
//    text that starts the input, never after a special token (as Hugging
//    Face's Metaspace prepend_scheme "first"), and also when the text already
//    starts with a space (as sentencepiece itself).
//  - the unk token (tokenizer.ggml.unknown_token_id, else the first token of
//    type 2) is UNKNOWN; control tokens are CONTROL, so sentencepiece never
//    produces them from text; user-defined tokens are USER_DEFINED, which
//    sentencepiece matches whole wherever they appear (always, parseSpecial or not).
//  - tokens written with real spaces (Gemma stores its whitespace-run tokens
//    as "   ") are given to sentencepiece spelled with "▁", because escaped
//    text never contains a space; duplicate or empty texts become unreachable
//    control pieces so that ids still line up.
//
// Decoding is per token (tokenBytes): "▁" -> " ", byte tokens -> that byte.
// The dummy prefix therefore comes back as a leading space of the first
// token; callers decoding a whole prompt strip it if they want.
//
// Thread-safety: immutable after create(); encode/decode from many threads
// (SentencePieceProcessor::Encode is const and keeps no state).
#pragma once

#include "special_token_matcher.h"
#include "tokenizer.h"
#include "vocabulary_tokenizer.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace sentencepiece { class SentencePieceProcessor; }
namespace kestrel::gguf { class GgufFile; }

namespace kestrel::tokenizer {

struct SpmVocabulary {
    std::vector<std::string> tokens;  // as the file spells them ("▁the", "<0x0A>", "<start_of_turn>")
    std::vector<float> scores;        // one per token; empty means all 0
    std::vector<TokenKind> kinds;     // one per token; empty means all Normal
    SpecialTokens special;            // ids and add flags; endOfGeneration is computed by create()
    TokenId eom = -1;
    bool addSpacePrefix = true;       // tokenizer.ggml.add_space_prefix
    bool removeExtraWhitespaces = false;
    std::string precompiledCharsmap;  // tokenizer.ggml.precompiled_charsmap, rarely present
    std::string where;                // "model.gguf: " prefix for messages
};

class SpmTokenizer final : public VocabularyTokenizer {
public:
    // Fails with InvalidFile when the vocabulary is inconsistent (no tokens,
    // scores or kinds of the wrong length) or sentencepiece refuses the model
    // (its message is passed on). Special ids outside the vocabulary are
    // dropped with a warning.
    static Result<std::unique_ptr<SpmTokenizer>> create(SpmVocabulary vocab);
    ~SpmTokenizer() override;

    std::vector<TokenId> encode(std::string_view text, bool addSpecial, bool parseSpecial) const override;

private:
    SpmTokenizer();
    void encodeText(std::string_view text, bool prefix, std::vector<TokenId>& out) const;

    std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
    SpecialTokenMatcher matcher_;  // control tokens only; user-defined ones are sentencepiece's
    bool addSpacePrefix_ = true;
};

// The tokenizer.ggml.* keys of a "llama" file (tokens, scores, token_type,
// *_token_id, add_*_token, add_space_prefix, remove_extra_whitespaces,
// precompiled_charsmap). Fails when a key has the wrong type. Copies the
// strings: the result does not refer to the file.
Result<SpmVocabulary> spmVocabularyFromGguf(const gguf::GgufFile& file);

}  // namespace kestrel::tokenizer
