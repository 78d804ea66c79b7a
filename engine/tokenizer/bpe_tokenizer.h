// Byte-level BPE (GGUF `tokenizer.ggml.model` = "gpt2"): GPT-2, Llama 3,
// Qwen2, SmolLM2, StarCoder... vocabularies.
//
// The core is built from plain vectors (BpeVocabulary) so that it can be
// tested without a model file; Tokenizer::fromGguf fills a BpeVocabulary from
// the tokenizer.ggml.* keys and calls BpeTokenizer::create.
//
// Encoding: special tokens are split out first (SpecialTokenMatcher), each
// remaining span is pre-tokenized by regex (PreTokenizer), and each piece is
// mapped to the byte-level alphabet and merged by rank, lowest rank first and
// leftmost among equals (a priority queue over a linked list of symbols, so
// a piece of n bytes costs O(n log n)).
//
// Thread-safety: immutable after create(); encode/decode from many threads.
#pragma once

#include "pre_tokenizer.h"
#include "special_token_matcher.h"
#include "tokenizer.h"
#include "vocabulary_tokenizer.h"

#include <array>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace kestrel::gguf { class GgufFile; }

namespace kestrel::tokenizer {

struct BpeVocabulary {
    std::vector<std::string> tokens;   // byte-level text for normal tokens, raw text for special ones
    std::vector<TokenKind> kinds;      // one per token; empty means all Normal
    std::vector<std::string> merges;   // "left right" in the byte-level alphabet; rank = index
    std::string preTokenizer = "gpt2"; // tokenizer.ggml.pre
    SpecialTokens special;             // ids and add flags; endOfGeneration is computed by create()
    TokenId eom = -1;                  // end of message (tool call), also ends generation
    std::string where;                 // "model.gguf: " prefix for messages
};

class BpeTokenizer final : public VocabularyTokenizer {
public:
    // Fails with InvalidFile when the vocabulary is inconsistent (no tokens,
    // kinds of the wrong length, a special id out of range, a merge without a
    // space). Merges whose parts or result are not tokens are skipped (counted
    // in warnings()). An unknown preTokenizer falls back to GPT-2's regex with
    // a warning.
    static Result<std::unique_ptr<BpeTokenizer>> create(BpeVocabulary vocab);

    std::vector<TokenId> encode(std::string_view text, bool addSpecial, bool parseSpecial) const override;

    const PreTokenizer& preTokenizer() const { return *pre_; }

private:
    struct Merge {
        int32_t rank;
        TokenId result;
    };
    struct Scratch;

    BpeTokenizer() = default;
    void encodePiece(std::string_view piece, Scratch& scratch, std::vector<TokenId>& out) const;
    static uint64_t pairKey(TokenId a, TokenId b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

    std::unordered_map<uint64_t, Merge> merges_;
    std::array<TokenId, 256> byteToken_{};  // the single-byte token for each byte, or -1
    std::unique_ptr<PreTokenizer> pre_;
    SpecialTokenMatcher matcher_;
};

// The tokenizer.ggml.* keys of a "gpt2" file (tokens, token_type, merges, pre,
// *_token_id, add_*_token). Fails when a key has the wrong type or merges are
// missing. Copies the strings: the result does not refer to the file.
Result<BpeVocabulary> bpeVocabularyFromGguf(const gguf::GgufFile& file);

// endOfGeneration for a vocabulary: eos, eot, eom and control tokens whose text
// is a known end-of-turn marker. Shared with the SentencePiece tokenizer.
std::vector<TokenId> collectEndOfGeneration(const SpecialTokens& special, TokenId eom,
                                            const std::vector<std::string>& tokens,
                                            const std::vector<TokenKind>& kinds);

}  // namespace kestrel::tokenizer
