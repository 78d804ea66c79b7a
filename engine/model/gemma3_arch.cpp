// gemma3: embeddings scaled by sqrt(n_embd); a norm before and after both
// attention and the GeGLU FFN (gelu tanh approximation); per-head Q/K norm;
// five sliding-window layers (window attention.sliding_window, RoPE base 10k)
// then one global layer (RoPE base rope.freq_base, with the file's scaling).
// GGUF gemma norm weights already include the "+1" of the HF checkpoints
// (the converter adds it), so they are plain RMSNorm gammas here.
#include "forward_blocks.h"

#include <cmath>

namespace kestrel::model {
namespace {

Status configure(const ConfigReader& r, ModelConfig& c) {
    c.ropeNeox = true;
    c.slidingPeriod = 6;
    auto local = r.optionalFloat("rope.freq_base_swa", 10000.0);
    if (!local) return local.status();
    c.ropeBaseLocal = static_cast<float>(local.value());
    c.embedScale = std::sqrt(static_cast<float>(c.nEmbd));
    // query_pre_attn_scalar is not in GGUF; for gemma3 it equals key_length.
    c.queryScale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    return Status::ok();
}

void tensors(const ModelConfig& c, ModelWeights& w, std::vector<TensorSpec>& out) {
    llamaFamilyTensors(c, w, out);
    const auto e = static_cast<uint64_t>(c.nEmbd);
    const auto hd = static_cast<uint64_t>(c.headDim);
    for (int il = 0; il < c.nLayer; ++il) {
        LayerWeights& l = w.layers[static_cast<size_t>(il)];
        out.push_back({layerTensorName(il, "attn_q_norm.weight"), {hd}, &l.qNorm});
        out.push_back({layerTensorName(il, "attn_k_norm.weight"), {hd}, &l.kNorm});
        out.push_back({layerTensorName(il, "post_attention_norm.weight"), {e}, &l.postAttnNorm});
        out.push_back({layerTensorName(il, "post_ffw_norm.weight"), {e}, &l.postFfnNorm});
    }
}

void forward(Step& st) {
    backend::Backend& be = st.be;
    Scratch& s = st.s;
    const float eps = st.cfg.normEps;
    embedTokens(st);
    for (int il = 0; il < st.cfg.nLayer; ++il) {
        const LayerWeights& l = st.w.layers[static_cast<size_t>(il)];
        normInto(st, *l.attnNorm);
        attentionBlock(st, il);
        be.rmsNorm(*s.tmp, *l.postAttnNorm, eps, *s.tmp, st.cfg.nEmbd);
        be.add(*s.x, *s.tmp, *s.x);
        normInto(st, *l.ffnNorm);
        gluFfnBlock(st, il, backend::GluKind::GeluTanh);
        be.rmsNorm(*s.tmp, *l.postFfnNorm, eps, *s.tmp, st.cfg.nEmbd);
        be.add(*s.x, *s.tmp, *s.x);
    }
    finalNorm(st);
}

}  // namespace

const ArchSpec kGemma3Arch{"gemma3", configure, tensors, forward};

}  // namespace kestrel::model
