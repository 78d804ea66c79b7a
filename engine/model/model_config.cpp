#include "model_config.h"

#include <cmath>
#include <limits>

namespace kestrel::model {
namespace {

Status invalid(const gguf::GgufFile& f, const std::string& what) {
    return Status(ErrorCode::InvalidFile, f.where() + what);
}

Result<int> toInt(const gguf::GgufFile& f, const std::string& key, int64_t v, int64_t min, int64_t max) {
    if (v < min || v > max)
        return invalid(f, "key '" + key + "' is " + std::to_string(v) + ", expected a value in [" +
                              std::to_string(min) + ", " + std::to_string(max) + "]");
    return static_cast<int>(v);
}

}  // namespace

Result<int64_t> ConfigReader::requireInt(std::string_view suffix) const {
    const std::string k = key(suffix);
    if (!file_.find(k))
        return Status(ErrorCode::InvalidFile,
                      file_.where() + "missing key '" + k + "' (required by architecture " + arch_ + ")");
    return file_.getInt(k);
}

Result<double> ConfigReader::requireFloat(std::string_view suffix) const {
    const std::string k = key(suffix);
    if (!file_.find(k))
        return Status(ErrorCode::InvalidFile,
                      file_.where() + "missing key '" + k + "' (required by architecture " + arch_ + ")");
    return file_.getFloat(k);
}

Result<int64_t> ConfigReader::optionalInt(std::string_view suffix, int64_t fallback) const {
    const std::string k = key(suffix);
    if (!file_.find(k)) return fallback;
    return file_.getInt(k);
}

Result<double> ConfigReader::optionalFloat(std::string_view suffix, double fallback) const {
    const std::string k = key(suffix);
    if (!file_.find(k)) return fallback;
    return file_.getFloat(k);
}

Result<std::string> ConfigReader::optionalString(std::string_view suffix, std::string fallback) const {
    const std::string k = key(suffix);
    if (!file_.find(k)) return fallback;
    return file_.getString(k);
}

#define KESTREL_ASSIGN(lhs, expr)                          \
    do {                                                   \
        auto kestrelR_ = (expr);                           \
        if (!kestrelR_.isOk()) return kestrelR_.status();  \
        lhs = kestrelR_.value();                           \
    } while (0)

Result<ModelConfig> readCommonConfig(const gguf::GgufFile& file, const std::string& arch) {
    ConfigReader r(file, arch);
    ModelConfig c;
    c.arch = arch;
    constexpr int64_t kBig = 1 << 24;
    int64_t v = 0;
    double d = 0;

    KESTREL_ASSIGN(v, r.requireInt("block_count"));
    KESTREL_ASSIGN(c.nLayer, toInt(file, r.key("block_count"), v, 1, 4096));
    KESTREL_ASSIGN(v, r.requireInt("embedding_length"));
    KESTREL_ASSIGN(c.nEmbd, toInt(file, r.key("embedding_length"), v, 1, kBig));
    KESTREL_ASSIGN(v, r.requireInt("feed_forward_length"));
    KESTREL_ASSIGN(c.nFf, toInt(file, r.key("feed_forward_length"), v, 1, kBig));
    KESTREL_ASSIGN(v, r.requireInt("attention.head_count"));
    KESTREL_ASSIGN(c.nHead, toInt(file, r.key("attention.head_count"), v, 1, 4096));
    KESTREL_ASSIGN(v, r.optionalInt("attention.head_count_kv", c.nHead));
    KESTREL_ASSIGN(c.nHeadKv, toInt(file, r.key("attention.head_count_kv"), v, 1, c.nHead));
    if (c.nHead % c.nHeadKv != 0)
        return invalid(file, "key '" + r.key("attention.head_count") + "' (" + std::to_string(c.nHead) +
                                 ") is not a multiple of '" + r.key("attention.head_count_kv") + "' (" +
                                 std::to_string(c.nHeadKv) + ")");
    KESTREL_ASSIGN(v, r.optionalInt("attention.key_length", c.nEmbd / c.nHead));
    KESTREL_ASSIGN(c.headDim, toInt(file, r.key("attention.key_length"), v, 2, 1024));
    KESTREL_ASSIGN(v, r.optionalInt("attention.value_length", c.headDim));
    KESTREL_ASSIGN(c.valueDim, toInt(file, r.key("attention.value_length"), v, 1, 1024));
    if (c.valueDim != c.headDim)
        return Status(ErrorCode::Unsupported, file.where() + "key length " + std::to_string(c.headDim) +
                                                  " differs from value length " + std::to_string(c.valueDim) +
                                                  "; Kestrel supports equal sizes only");
    KESTREL_ASSIGN(d, r.requireFloat("attention.layer_norm_rms_epsilon"));
    if (!(d > 0.0 && d < 1.0)) return invalid(file, "key '" + r.key("attention.layer_norm_rms_epsilon") + "' must be in (0, 1)");
    c.normEps = static_cast<float>(d);
    KESTREL_ASSIGN(c.contextLength, r.requireInt("context_length"));
    if (c.contextLength <= 0) return invalid(file, "key '" + r.key("context_length") + "' must be positive");

    KESTREL_ASSIGN(d, r.optionalFloat("rope.freq_base", 10000.0));
    if (!(d > 1.0)) return invalid(file, "key '" + r.key("rope.freq_base") + "' must be greater than 1");
    c.ropeBase = static_cast<float>(d);
    c.ropeBaseLocal = c.ropeBase;
    KESTREL_ASSIGN(v, r.optionalInt("rope.dimension_count", c.headDim));
    KESTREL_ASSIGN(c.ropeDims, toInt(file, r.key("rope.dimension_count"), v, 2, c.headDim));
    if (c.ropeDims % 2 != 0) return invalid(file, "key '" + r.key("rope.dimension_count") + "' must be even");

    std::string scaling;
    KESTREL_ASSIGN(scaling, r.optionalString("rope.scaling.type", "none"));
    KESTREL_ASSIGN(d, r.optionalFloat("rope.scaling.factor", 0.0));
    if (d == 0.0) {
        double linear = 0;
        KESTREL_ASSIGN(linear, r.optionalFloat("rope.scale_linear", 0.0));  // older files
        if (linear > 0.0) {
            scaling = "linear";
            d = linear;
        }
    }
    if (scaling == "none" || d == 0.0 || d == 1.0) {
        c.ropeScaling = backend::RopeScaling::None;
    } else if (scaling == "linear") {
        c.ropeScaling = backend::RopeScaling::Linear;
    } else if (scaling == "yarn") {
        c.ropeScaling = backend::RopeScaling::Yarn;
    } else {
        return Status(ErrorCode::Unsupported, file.where() + "key '" + r.key("rope.scaling.type") + "' is '" +
                                                  scaling + "'; supported: none, linear, yarn");
    }
    if (c.ropeScaling != backend::RopeScaling::None && !(d > 0.0))
        return invalid(file, "key '" + r.key("rope.scaling.factor") + "' must be positive");
    c.ropeFactor = c.ropeScaling == backend::RopeScaling::None ? 1.0f : static_cast<float>(d);
    KESTREL_ASSIGN(d, r.optionalFloat("rope.scaling.original_context_length", static_cast<double>(c.contextLength)));
    c.ropeOriginalContext = static_cast<float>(d);
    KESTREL_ASSIGN(d, r.optionalFloat("rope.scaling.yarn_beta_fast", 32.0));
    c.ropeYarnBetaFast = static_cast<float>(d);
    KESTREL_ASSIGN(d, r.optionalFloat("rope.scaling.yarn_beta_slow", 1.0));
    c.ropeYarnBetaSlow = static_cast<float>(d);
    KESTREL_ASSIGN(d, r.optionalFloat("rope.scaling.attn_factor", 1.0));
    c.ropeAttnFactor = static_cast<float>(d);

    KESTREL_ASSIGN(v, r.optionalInt("attention.sliding_window", 0));
    KESTREL_ASSIGN(c.slidingWindow, toInt(file, r.key("attention.sliding_window"), v, 0, std::numeric_limits<int>::max()));
    KESTREL_ASSIGN(d, r.optionalFloat("attn_logit_softcapping", 0.0));
    c.attnSoftcap = static_cast<float>(d);
    KESTREL_ASSIGN(d, r.optionalFloat("final_logit_softcapping", 0.0));
    c.finalSoftcap = static_cast<float>(d);
    c.queryScale = 1.0f / std::sqrt(static_cast<float>(c.headDim));

    // Vocabulary: the tokenizer's list is authoritative; synthetic files may only have the key.
    if (const gguf::Value* tokens = file.find("tokenizer.ggml.tokens"); tokens && tokens->asArray()) {
        c.vocabSize = static_cast<int>(tokens->asArray()->items.size());
    } else {
        KESTREL_ASSIGN(v, r.optionalInt("vocab_size", 0));
        if (v <= 0) {
            const gguf::TensorInfo* embd = file.findTensor("token_embd.weight");
            v = embd && embd->dims.size() == 2 ? static_cast<int64_t>(embd->dims[1]) : 0;
        }
        KESTREL_ASSIGN(c.vocabSize, toInt(file, "tokenizer.ggml.tokens", v, 1, 1 << 28));
    }
    return c;
}

Status validateConfig(const gguf::GgufFile& file, const ModelConfig& c) {
    if (static_cast<int64_t>(c.nHead) * c.headDim > (1 << 24) || c.vocabSize <= 0)
        return invalid(file, "implausible attention or vocabulary size");
    if (c.ropeDims / 2 > 512) return Status(ErrorCode::Unsupported, file.where() + "rope dimension above 1024");
    return Status::ok();
}

}  // namespace kestrel::model
