// Tokenizer::fromGguf: the tokenizer.ggml.* keys -> a vocabulary -> the
// implementation named by tokenizer.ggml.model.
#include "bpe_tokenizer.h"
#include "gguf_file.h"
#include "gguf_vocab_keys.h"
#include "spm_tokenizer.h"

namespace kestrel {
namespace {

using gguf::GgufFile;

Result<std::vector<std::string>> stringArray(const GgufFile& file, std::string_view key) {
    auto views = file.getStringArray(key);
    if (!views) return views.status();
    return std::vector<std::string>(views->begin(), views->end());
}

}  // namespace

Result<tokenizer::BpeVocabulary> tokenizer::bpeVocabularyFromGguf(const GgufFile& file) {
    tokenizer::BpeVocabulary v;
    v.where = file.where();
    auto tokens = stringArray(file, "tokenizer.ggml.tokens");
    if (!tokens) return tokens.status();
    v.tokens = std::move(tokens.value());

    if (Status st = tokenizer::readTokenKinds(file, v.kinds); !st.isOk()) return st;

    // Byte-level BPE without merges would encode every byte on its own: a
    // silently wrong tokenizer, so refuse.
    if (!file.find("tokenizer.ggml.merges"))
        return Status(ErrorCode::InvalidFile, file.where() + "tokenizer.ggml.merges is missing; a 'gpt2' "
                                                             "tokenizer needs its merges");
    auto merges = stringArray(file, "tokenizer.ggml.merges");
    if (!merges) return merges.status();
    v.merges = std::move(merges.value());

    auto pre = file.find("tokenizer.ggml.pre") ? file.getString("tokenizer.ggml.pre") : Result<std::string>("default");
    if (!pre) return pre.status();
    v.preTokenizer = std::move(pre.value());

    if (Status st = tokenizer::readSpecialIds(file, v.special, v.eom); !st.isOk()) return st;
    auto addBos = tokenizer::optionalBool(file, "tokenizer.ggml.add_bos_token", false);
    if (!addBos) return addBos.status();
    auto addEos = tokenizer::optionalBool(file, "tokenizer.ggml.add_eos_token", false);
    if (!addEos) return addEos.status();
    v.special.addBos = *addBos;
    v.special.addEos = *addEos;
    return v;
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::fromGguf(const gguf::GgufFile& file) {
    if (!file.find("tokenizer.ggml.model"))
        return Status(ErrorCode::NotFound, file.where() + "tokenizer.ggml.model is missing: the file has no tokenizer");
    auto model = file.getString("tokenizer.ggml.model");
    if (!model) return model.status();
    if (*model == "gpt2") {
        auto vocab = tokenizer::bpeVocabularyFromGguf(file);
        if (!vocab) return vocab.status();
        auto bpe = tokenizer::BpeTokenizer::create(std::move(vocab.value()));
        if (!bpe) return bpe.status();
        return std::unique_ptr<Tokenizer>(std::move(bpe.value()));
    }
    if (*model == "llama") {
        auto vocab = tokenizer::spmVocabularyFromGguf(file);
        if (!vocab) return vocab.status();
        auto spm = tokenizer::SpmTokenizer::create(std::move(vocab.value()));
        if (!spm) return spm.status();
        return std::unique_ptr<Tokenizer>(std::move(spm.value()));
    }
    return Status(ErrorCode::Unsupported, file.where() + "tokenizer.ggml.model = '" + *model +
                                              "' is not supported yet (Kestrel reads 'gpt2' byte-level BPE "
                                              "and 'llama' SentencePiece)");
}

}  // namespace kestrel
