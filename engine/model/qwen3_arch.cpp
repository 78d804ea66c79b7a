// qwen3: the llama layout with a per-head RMSNorm on Q and K before RoPE
// (attn_q_norm / attn_k_norm, head_dim values each), no biases, NEOX RoPE.
#include "forward_blocks.h"

namespace kestrel::model {
namespace {

Status configure(const ConfigReader&, ModelConfig& c) {
    c.ropeNeox = true;
    return Status::ok();
}

void tensors(const ModelConfig& c, ModelWeights& w, std::vector<TensorSpec>& out) {
    llamaFamilyTensors(c, w, out);
    const auto hd = static_cast<uint64_t>(c.headDim);
    for (int il = 0; il < c.nLayer; ++il) {
        LayerWeights& l = w.layers[static_cast<size_t>(il)];
        out.push_back({layerTensorName(il, "attn_q_norm.weight"), {hd}, &l.qNorm});
        out.push_back({layerTensorName(il, "attn_k_norm.weight"), {hd}, &l.kNorm});
    }
}

}  // namespace

const ArchSpec kQwen3Arch{"qwen3", configure, tensors, preNormSwiGluForward};

}  // namespace kestrel::model
