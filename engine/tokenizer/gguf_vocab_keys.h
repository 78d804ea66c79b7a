// The tokenizer.ggml.* keys that the byte-level BPE (tokenizer_gguf.cpp) and the
// SentencePiece (spm_gguf.cpp) vocabularies read alike.
#pragma once

#include "gguf_file.h"
#include "tokenizer.h"

#include <string>
#include <string_view>
#include <vector>

namespace kestrel::tokenizer {

// A bool key; `fallback` when the file has none.
Result<bool> optionalBool(const gguf::GgufFile& file, std::string_view key, bool fallback);

// tokenizer.ggml.token_type as kinds (0 = undefined and unknown values: Normal);
// left empty when the file has none.
Status readTokenKinds(const gguf::GgufFile& file, std::vector<TokenKind>& kinds);

// fn(id, key) for the bos, eos, eot, unk and pad ids of `special` and the
// end-of-message id `eom`, with the name of each one's key after "tokenizer.ggml.".
template <class Fn>
void forEachSpecialId(SpecialTokens& special, TokenId& eom, Fn&& fn) {
    fn(special.bos, "bos_token_id");
    fn(special.eos, "eos_token_id");
    fn(special.eot, "eot_token_id");
    fn(special.unk, "unknown_token_id");
    fn(special.pad, "padding_token_id");
    fn(eom, "eom_token_id");
}

// The special ids (forEachSpecialId) from the file. An absent key, -1 or UINT32_MAX
// (some converters' "none") give -1.
Status readSpecialIds(const gguf::GgufFile& file, SpecialTokens& special, TokenId& eom);

// A special id outside a vocabulary of n tokens is a broken key, but the model can
// still run without it: it is dropped (set to -1) with a line in `warnings` rather
// than refused. `where` prefixes the key's name.
void dropSpecialIdsOutside(SpecialTokens& special, TokenId& eom, int64_t n, const std::string& where,
                           std::vector<std::string>& warnings);

}  // namespace kestrel::tokenizer
