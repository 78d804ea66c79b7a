// The tokenizer.ggml.* keys that the byte-level BPE (tokenizer_gguf.cpp) and the
// SentencePiece (spm_gguf.cpp) vocabularies read alike.
#pragma once

#include "gguf_file.h"
#include "tokenizer.h"

#include <string_view>
#include <vector>

namespace kestrel::tokenizer {

// A bool key; `fallback` when the file has none.
Result<bool> optionalBool(const gguf::GgufFile& file, std::string_view key, bool fallback);

// tokenizer.ggml.token_type as kinds (0 = undefined and unknown values: Normal);
// left empty when the file has none.
Status readTokenKinds(const gguf::GgufFile& file, std::vector<TokenKind>& kinds);

// The bos, eos, eot, unk and pad ids and the end-of-message id `eom`. An absent
// key, -1 or UINT32_MAX (some converters' "none") give -1.
Status readSpecialIds(const gguf::GgufFile& file, SpecialTokens& special, TokenId& eom);

}  // namespace kestrel::tokenizer
