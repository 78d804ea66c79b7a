#include "arch_table.h"

#include <array>

namespace kestrel::model {
namespace {

constexpr std::array<const ArchSpec*, 4> kArchs = {&kLlamaArch, &kQwen2Arch, &kQwen3Arch, &kGemma3Arch};

}  // namespace

const ArchSpec* findArch(std::string_view name) {
    for (const ArchSpec* a : kArchs)
        if (a->name == name) return a;
    return nullptr;
}

std::string supportedArchNames() {
    std::string s;
    for (const ArchSpec* a : kArchs) {
        if (!s.empty()) s += ", ";
        s += a->name;
    }
    return s;
}

std::string layerTensorName(int il, std::string_view suffix) {
    return "blk." + std::to_string(il) + "." + std::string(suffix);
}

void llamaFamilyTensors(const ModelConfig& c, ModelWeights& w, std::vector<TensorSpec>& out) {
    const auto e = static_cast<uint64_t>(c.nEmbd);
    const auto qDim = static_cast<uint64_t>(c.nHead) * c.headDim;
    const auto kvDim = static_cast<uint64_t>(c.nHeadKv) * c.headDim;
    const auto ff = static_cast<uint64_t>(c.nFf);
    out.push_back({"token_embd.weight", {e, static_cast<uint64_t>(c.vocabSize)}, &w.tokenEmbd});
    out.push_back({"output_norm.weight", {e}, &w.outputNorm});
    out.push_back({"output.weight", {e, static_cast<uint64_t>(c.vocabSize)}, &w.output, false});
    out.push_back({"rope_freqs.weight", {static_cast<uint64_t>(c.ropeDims / 2)}, &w.ropeFreqs, false});
    w.layers.resize(static_cast<size_t>(c.nLayer));
    for (int il = 0; il < c.nLayer; ++il) {
        LayerWeights& l = w.layers[static_cast<size_t>(il)];
        out.push_back({layerTensorName(il, "attn_norm.weight"), {e}, &l.attnNorm});
        out.push_back({layerTensorName(il, "attn_q.weight"), {e, qDim}, &l.wq});
        out.push_back({layerTensorName(il, "attn_k.weight"), {e, kvDim}, &l.wk});
        out.push_back({layerTensorName(il, "attn_v.weight"), {e, kvDim}, &l.wv});
        out.push_back({layerTensorName(il, "attn_output.weight"), {qDim, e}, &l.wo});
        out.push_back({layerTensorName(il, "ffn_norm.weight"), {e}, &l.ffnNorm});
        out.push_back({layerTensorName(il, "ffn_gate.weight"), {e, ff}, &l.ffnGate});
        out.push_back({layerTensorName(il, "ffn_up.weight"), {e, ff}, &l.ffnUp});
        out.push_back({layerTensorName(il, "ffn_down.weight"), {ff, e}, &l.ffnDown});
    }
}

}  // namespace kestrel::model
