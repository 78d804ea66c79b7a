// Tiny random-weight GGUF models for the four architectures, written with
// engine/gguf's GgufWriter. The tensor list here is written from the GGUF
// naming conventions, independently of engine/model's ArchSpec rows, and
// Mutation breaks one thing on purpose for the hostile-model tests.
#pragma once

#include "gguf_writer.h"
#include "matmul.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace kestrel::test {

struct SynthSpec {
    std::string arch = "llama";
    int nLayer = 2, nEmbd = 64, nHead = 4, nHeadKv = 2, headDim = 16, nFf = 128, vocab = 96, ctx = 128;
    int window = 0;       // gemma3: attention.sliding_window
    float ropeBase = 10000.0f;
    bool tied = false;    // no output.weight
    bool f32Weights = false;  // every matrix F32 (the exact matmul path) instead of Q8_0/F16
    uint32_t seed = 1;
};

struct Mutation {
    std::string dropKey;        // e.g. "llama.block_count"
    std::string dropTensor;     // e.g. "blk.1.ffn_up.weight"
    std::string badShapeTensor; // second dim shrunk by 12 (a 2-D tensor) or first dim by 2
    std::string badTypeTensor;  // stored as I8 (valid GGUF, not computable)
};

inline Status writeSynthetic(const SynthSpec& s, const std::string& path, const Mutation& mut = {}) {
    using gguf::GgufWriter;
    GgufWriter w;
    std::mt19937 rng(s.seed);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    const std::string a = s.arch;
    auto setU = [&](const std::string& k, uint32_t v) {
        if (k != mut.dropKey) w.setUInt32(k, v);
    };
    w.setString("general.architecture", a);
    setU(a + ".block_count", s.nLayer);
    setU(a + ".embedding_length", s.nEmbd);
    setU(a + ".feed_forward_length", s.nFf);
    setU(a + ".attention.head_count", s.nHead);
    setU(a + ".attention.head_count_kv", s.nHeadKv);
    setU(a + ".attention.key_length", s.headDim);
    setU(a + ".attention.value_length", s.headDim);
    setU(a + ".context_length", s.ctx);
    if (a + ".attention.layer_norm_rms_epsilon" != mut.dropKey) w.setFloat32(a + ".attention.layer_norm_rms_epsilon", 1e-6f);
    w.setFloat32(a + ".rope.freq_base", s.ropeBase);
    if (s.window > 0) setU(a + ".attention.sliding_window", s.window);
    setU(a + ".vocab_size", s.vocab);

    Status status = Status::ok();
    // type: F32 (norms, biases), F16 or Q8_0 for matrices.
    auto tensor = [&](const std::string& name, std::vector<uint64_t> dims, GgmlType type, float scale, float offset) {
        if (!status.isOk() || name == mut.dropTensor) return;
        if (name == mut.badShapeTensor) {
            if (dims.size() == 2) dims[1] -= 12; else dims[0] -= 2;
        }
        uint64_t n = 1;
        for (auto d : dims) n *= d;
        std::vector<float> v(n);
        for (float& x : v) x = offset + scale * nd(rng);
        std::vector<uint8_t> bytes;
        if (name == mut.badTypeTensor) {
            type = GgmlType::I8;
            bytes.assign(n, 1);
        } else if (type == GgmlType::F32 || s.f32Weights) {
            type = GgmlType::F32;
            bytes.resize(n * 4);
            std::memcpy(bytes.data(), v.data(), bytes.size());
        } else {
            const uint64_t rowBytes = *ggmlRowBytes(type, dims[0]);
            bytes.resize(rowBytes * (n / dims[0]));
            for (uint64_t r = 0; r < n / dims[0]; ++r)
                kernels::quantizeRow(type, v.data() + r * dims[0], bytes.data() + r * rowBytes, static_cast<int64_t>(dims[0]));
        }
        status = w.addTensor(name, type, dims, bytes);
    };
    const uint64_t e = s.nEmbd, q = uint64_t(s.nHead) * s.headDim, kv = uint64_t(s.nHeadKv) * s.headDim, ff = s.nFf;
    const float we = 1.0f / std::sqrt(float(s.nEmbd));
    tensor("token_embd.weight", {e, uint64_t(s.vocab)}, GgmlType::Q8_0, a == "gemma3" ? 0.15f : 0.5f, 0.0f);
    tensor("output_norm.weight", {e}, GgmlType::F32, 0.1f, 1.0f);
    if (!s.tied) tensor("output.weight", {e, uint64_t(s.vocab)}, GgmlType::Q8_0, 2.0f * we, 0.0f);
    for (int il = 0; il < s.nLayer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        tensor(p + "attn_norm.weight", {e}, GgmlType::F32, 0.1f, 1.0f);
        tensor(p + "attn_q.weight", {e, q}, GgmlType::Q8_0, 1.5f * we, 0.0f);
        tensor(p + "attn_k.weight", {e, kv}, GgmlType::Q8_0, 1.5f * we, 0.0f);
        tensor(p + "attn_v.weight", {e, kv}, GgmlType::F16, we, 0.0f);
        tensor(p + "attn_output.weight", {q, e}, GgmlType::Q8_0, 1.0f / std::sqrt(float(q)), 0.0f);
        if (a == "qwen2") {
            tensor(p + "attn_q.bias", {q}, GgmlType::F32, 0.2f, 0.0f);
            tensor(p + "attn_k.bias", {kv}, GgmlType::F32, 0.2f, 0.0f);
            tensor(p + "attn_v.bias", {kv}, GgmlType::F32, 0.2f, 0.0f);
        }
        if (a == "qwen3" || a == "gemma3") {
            tensor(p + "attn_q_norm.weight", {uint64_t(s.headDim)}, GgmlType::F32, 0.1f, 1.0f);
            tensor(p + "attn_k_norm.weight", {uint64_t(s.headDim)}, GgmlType::F32, 0.1f, 1.0f);
        }
        if (a == "gemma3") {
            tensor(p + "post_attention_norm.weight", {e}, GgmlType::F32, 0.1f, 1.0f);
            tensor(p + "post_ffw_norm.weight", {e}, GgmlType::F32, 0.1f, 1.0f);
        }
        tensor(p + "ffn_norm.weight", {e}, GgmlType::F32, 0.1f, 1.0f);
        tensor(p + "ffn_gate.weight", {e, ff}, GgmlType::Q8_0, 1.5f * we, 0.0f);
        tensor(p + "ffn_up.weight", {e, ff}, GgmlType::F16, we, 0.0f);
        tensor(p + "ffn_down.weight", {ff, e}, GgmlType::Q8_0, 1.0f / std::sqrt(float(ff)), 0.0f);
    }
    if (!status.isOk()) return status;
    return w.write(path);
}

}  // namespace kestrel::test
