// Hyperparameters of a model, read from GGUF metadata and validated.
//
// Keys are "<arch>.<name>" (e.g. "llama.block_count"). Which keys an
// architecture requires and what its defaults are lives in that
// architecture's row of the ArchSpec table (arch_table.h); this file holds
// the shared reading and checking. A missing or ill-typed key is an error
// naming the file and the key; an impossible value (zero heads, heads not a
// multiple of kv heads) is an error saying what was expected.
#pragma once

#include "backend.h"
#include "gguf_file.h"
#include "kestrel/status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kestrel::model {

struct ModelConfig {
    std::string arch;  // general.architecture
    int nLayer = 0;
    int nEmbd = 0;
    int nFf = 0;
    int nHead = 0;
    int nHeadKv = 0;
    int headDim = 0;    // attention.key_length, default nEmbd / nHead
    int valueDim = 0;   // attention.value_length, default headDim
    int vocabSize = 0;
    float normEps = 1e-5f;
    int64_t contextLength = 0;  // trained context

    // RoPE. Global layers use ropeBase (+ scaling); sliding-window layers of
    // gemma3-style models use ropeBaseLocal without scaling.
    int ropeDims = 0;
    bool ropeNeox = false;
    float ropeBase = 10000.0f;
    float ropeBaseLocal = 10000.0f;
    backend::RopeScaling ropeScaling = backend::RopeScaling::None;
    float ropeFactor = 1.0f;
    float ropeOriginalContext = 0.0f;
    float ropeLowFreqFactor = 1.0f;
    float ropeHighFreqFactor = 4.0f;
    float ropeYarnBetaFast = 32.0f;
    float ropeYarnBetaSlow = 1.0f;
    float ropeYarnExtFactor = 1.0f;
    float ropeAttnFactor = 1.0f;

    int slidingWindow = 0;   // 0: none
    int slidingPeriod = 0;   // > 0: layer il is global iff il % period == period - 1, others slide
    float queryScale = 0.0f; // multiplies q.k; 1/sqrt(headDim) unless the arch says otherwise
    float embedScale = 1.0f; // multiplies token embeddings (gemma: sqrt(nEmbd))
    float attnSoftcap = 0.0f;
    float finalSoftcap = 0.0f;
    bool tiedEmbeddings = false;  // output.weight absent: logits use token_embd.weight

    bool isSlidingLayer(int il) const {
        if (slidingWindow <= 0) return false;
        if (slidingPeriod <= 0) return true;
        return il % slidingPeriod != slidingPeriod - 1;
    }
};

// Typed reads of "<arch>.<suffix>" keys that produce actionable errors.
class ConfigReader {
public:
    ConfigReader(const gguf::GgufFile& file, std::string arch) : file_(file), arch_(std::move(arch)) {}

    std::string key(std::string_view suffix) const { return arch_ + "." + std::string(suffix); }
    bool has(std::string_view suffix) const { return file_.find(key(suffix)) != nullptr; }

    // Required: missing -> "model.gguf: missing key 'llama.block_count' (required by architecture llama)".
    Result<int64_t> requireInt(std::string_view suffix) const;
    Result<double> requireFloat(std::string_view suffix) const;
    Result<int64_t> optionalInt(std::string_view suffix, int64_t fallback) const;
    Result<double> optionalFloat(std::string_view suffix, double fallback) const;
    Result<std::string> optionalString(std::string_view suffix, std::string fallback) const;

    const gguf::GgufFile& file() const { return file_; }
    const std::string& arch() const { return arch_; }

private:
    const gguf::GgufFile& file_;
    std::string arch_;
};

// Reads the keys every supported architecture shares (block_count,
// embedding_length, feed_forward_length, head counts, key/value length, norm
// epsilon, context length, rope base/dims/scaling, sliding window, vocab size)
// and checks the values fit together.
Result<ModelConfig> readCommonConfig(const gguf::GgufFile& file, const std::string& arch);
Status validateConfig(const gguf::GgufFile& file, const ModelConfig& c);

}  // namespace kestrel::model
