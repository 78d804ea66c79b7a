// Pre-tokenizers for byte-level BPE: split text into pieces that BPE then
// encodes independently, as named by GGUF's `tokenizer.ggml.pre`.
//
// A pre-tokenizer is a row in a table (pre_tokenizer.cpp): the names it goes
// by, and a sequence of regex stages. Each stage splits every piece produced by
// the previous stage into its matches and the text between matches (Hugging
// Face's "Isolated" split behaviour), so "Digits(individual) then ByteLevel" is
// two stages: `\p{N}` and the GPT-2 regex.
//
// Regexes run with PCRE2 in UTF + UCP mode (Unicode \s, \p{L}...), JIT-compiled
// where the platform supports it. Ill-formed UTF-8 never matches and so ends up
// in the between-matches pieces, byte for byte.
//
// Thread-safety: a PreTokenizer is immutable after create(); split() may run
// on many threads at once (match state is per call).
#pragma once

#include "kestrel/status.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kestrel::tokenizer {

struct PreTokenizerSpec {
    std::string name;                 // canonical name of the row
    std::vector<std::string> stages;  // regexes, applied in order
    // The BPE model looks a whole piece up in the vocabulary before merging
    // (HF `ignore_merges`, used by Llama 3's tokenizer).
    bool ignoreMerges = false;
};

// The row for a `tokenizer.ggml.pre` value, or nullptr if Kestrel does not know it.
const PreTokenizerSpec* findPreTokenizerSpec(std::string_view preName);
// The GPT-2 row, the fallback for unknown names.
const PreTokenizerSpec& gpt2PreTokenizerSpec();
// Every name the table knows, for messages and tests.
std::vector<std::string> knownPreTokenizerNames();

class PreTokenizer {
public:
    ~PreTokenizer();
    PreTokenizer(const PreTokenizer&) = delete;
    PreTokenizer& operator=(const PreTokenizer&) = delete;

    // Fails (InvalidArgument) when a stage does not compile.
    static Result<std::unique_ptr<PreTokenizer>> create(const PreTokenizerSpec& spec);

    const PreTokenizerSpec& spec() const { return spec_; }

    // Appends the pieces of `text` to `out`, in order; together they cover
    // `text` exactly. The views point into `text`.
    void split(std::string_view text, std::vector<std::string_view>& out) const;

private:
    struct Stage;
    explicit PreTokenizer(PreTokenizerSpec spec);

    PreTokenizerSpec spec_;
    std::vector<std::unique_ptr<Stage>> stages_;
};

}  // namespace kestrel::tokenizer
