// qwen2: the llama layout with Q/K/V biases and NEOX-mode RoPE (pairs i, i + d/2).
#include "forward_blocks.h"

namespace kestrel::model {
namespace {

Status configure(const ConfigReader&, ModelConfig& c) {
    c.ropeNeox = true;
    return Status::ok();
}

void tensors(const ModelConfig& c, ModelWeights& w, std::vector<TensorSpec>& out) {
    llamaFamilyTensors(c, w, out);
    const auto qDim = static_cast<uint64_t>(c.nHead) * c.headDim;
    const auto kvDim = static_cast<uint64_t>(c.nHeadKv) * c.headDim;
    for (int il = 0; il < c.nLayer; ++il) {
        LayerWeights& l = w.layers[static_cast<size_t>(il)];
        out.push_back({layerTensorName(il, "attn_q.bias"), {qDim}, &l.bq});
        out.push_back({layerTensorName(il, "attn_k.bias"), {kvDim}, &l.bk});
        out.push_back({layerTensorName(il, "attn_v.bias"), {kvDim}, &l.bv});
    }
}

}  // namespace

const ArchSpec kQwen2Arch{"qwen2", configure, tensors, preNormSwiGluForward};

}  // namespace kestrel::model
