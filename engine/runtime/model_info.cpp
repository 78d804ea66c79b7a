// ModelInfo: what the settings dialog and `kestrel-cli info` show about a file.
#include "model_impl.h"

#include <map>

namespace kestrel {
namespace {

// general.file_type values (llama_ftype) to the names users know.
std::string fileTypeName(int64_t ftype) {
    static const std::map<int64_t, const char*> names = {
        {0, "F32"},     {1, "F16"},     {2, "Q4_0"},    {3, "Q4_1"},    {7, "Q8_0"},    {8, "Q5_0"},
        {9, "Q5_1"},    {10, "Q2_K"},   {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"}, {14, "Q4_K_S"},
        {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"}, {18, "Q6_K"},   {32, "BF16"},
    };
    auto it = names.find(ftype);
    return it == names.end() ? std::string() : it->second;
}

}  // namespace

ModelInfo describeModel(const gguf::GgufFile& file, const model::ModelConfig& c, const std::string& backendName) {
    ModelInfo info;
    info.path = file.path();
    info.name = file.getString("general.name", "");
    info.architecture = c.arch;
    info.fileBytes = file.fileSize();
    info.layers = c.nLayer;
    info.embedding = c.nEmbd;
    info.heads = c.nHead;
    info.kvHeads = c.nHeadKv;
    info.headDim = c.headDim;
    info.feedForward = c.nFf;
    info.vocabSize = c.vocabSize;
    info.trainedContext = int32_t(c.contextLength);
    info.chatTemplate = file.getString("tokenizer.chat_template", "");
    info.backend = backendName;
    // kvBytesPerToken and kvPrecision: Model::load, from the KV cache it creates.

    std::map<std::string, uint64_t> bytesByType;
    for (const auto& t : file.tensors()) {
        info.parameterCount += t.elements;
        const std::string type(ggmlTypeName(t.type));
        ++info.tensorTypes[type];
        if (t.dims.size() >= 2) bytesByType[type] += t.bytes;
        // A decode step reads every weight once, except the embedding table
        // (one row) unless it doubles as the output projection.
        const bool embedding = t.name == "token_embd.weight";
        if (!embedding || c.tiedEmbeddings) info.weightBytesPerToken += t.bytes;
    }
    info.fileType = fileTypeName(file.getInt("general.file_type", -1));
    if (info.fileType.empty()) {
        uint64_t most = 0;
        for (const auto& [type, bytes] : bytesByType)
            if (bytes > most) most = bytes, info.fileType = type;
    }
    if (info.name.empty()) info.name = file.path().substr(file.path().find_last_of('/') + 1);
    return info;
}

uint64_t ModelInfo::memoryEstimate(int32_t tokens) const {
    // Weights (mapped) + KV cache + scratch: activations for a prefill chunk
    // and the logits rows, rounded up generously.
    const uint64_t scratch = 32ull * 1024 * 1024 + uint64_t(vocabSize) * 4u * 2u;
    return fileBytes + kvBytesPerToken * uint64_t(tokens > 0 ? tokens : 0) + scratch;
}

}  // namespace kestrel
