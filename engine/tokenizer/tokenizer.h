// Text <-> token ids, built from a GGUF file's tokenizer.ggml.* metadata.
//
// Tokenizer::fromGguf picks the implementation from `tokenizer.ggml.model`:
// "gpt2" is byte-level BPE with the pre-tokenizer named by `tokenizer.ggml.pre`
// (regexes run with PCRE2 and Unicode properties; see bpe_tokenizer.h). Other
// models ("llama" = SentencePiece) come with their own issue and fail here
// with Unsupported.
//
// Special tokens: control tokens (token_type 3) are matched in the text only
// when parseSpecial; user-defined tokens (4) are ordinary vocabulary entries
// that HF's tokenizers always match, so they are matched either way.
//
// Thread-safety: a Tokenizer is immutable after construction; encode/decode
// may run on many threads at once. StreamDecoder is per-stream state.
#pragma once

#include "kestrel/status.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kestrel::gguf { class GgufFile; }

namespace kestrel {

using TokenId = int32_t;

enum class TokenKind : uint8_t { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

struct SpecialTokens {
    TokenId bos = -1, eos = -1, eot = -1, unk = -1, pad = -1;
    bool addBos = false, addEos = false;
    std::vector<TokenId> endOfGeneration;  // eos, eot, <|im_end|>... : any of them ends a reply
};

class Tokenizer {
public:
    virtual ~Tokenizer() = default;

    static Result<std::unique_ptr<Tokenizer>> fromGguf(const gguf::GgufFile& file);

    // addSpecial: prepend BOS / append EOS when the model's metadata says so.
    // parseSpecial: text like "<|im_start|>" becomes its control token; when
    // false such text is tokenized as ordinary characters (user content).
    virtual std::vector<TokenId> encode(std::string_view text, bool addSpecial, bool parseSpecial) const = 0;

    // The bytes a token stands for (byte-level BPE decoded to raw bytes; may be
    // part of a UTF-8 character). Control tokens give their text only if
    // renderSpecial, else "".
    virtual std::string tokenBytes(TokenId id, bool renderSpecial = false) const = 0;

    // The token's text as stored in the vocabulary ("Ġthe").
    virtual std::string_view tokenText(TokenId id) const = 0;
    virtual TokenKind tokenKind(TokenId id) const = 0;
    virtual std::optional<TokenId> findToken(std::string_view text) const = 0;
    virtual int32_t vocabSize() const = 0;
    virtual const SpecialTokens& special() const = 0;
    // Things the caller may want to show once (an unknown pre-tokenizer, keys
    // that were ignored); the tokenizer works regardless. Never printed by the engine.
    virtual const std::vector<std::string>& warnings() const;

    bool isEndOfGeneration(TokenId id) const;
    // The concatenated bytes of `ids` as valid UTF-8 (ill-formed sequences,
    // e.g. a character cut at the end, become U+FFFD).
    std::string decode(std::span<const TokenId> ids, bool renderSpecial = false) const;
};

// Turns a stream of token ids into text pieces that never split a UTF-8
// character: bytes of an incomplete character are held back until the token
// that completes it (or flush() at the end, which replaces a dangling partial
// character with U+FFFD).
class StreamDecoder {
public:
    explicit StreamDecoder(const Tokenizer& tokenizer, bool renderSpecial = false)
        : tokenizer_(tokenizer), renderSpecial_(renderSpecial) {}
    std::string push(TokenId id);  // the complete characters now available (maybe "")
    std::string flush();

private:
    const Tokenizer& tokenizer_;
    bool renderSpecial_;
    std::string pending_;
};

}  // namespace kestrel
