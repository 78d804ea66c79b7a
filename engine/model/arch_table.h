// Architectures as rows of one table.
//
// An ArchSpec says, for one `general.architecture` value, which metadata it
// needs beyond the shared keys (configure), which tensors it has with which
// shapes (tensors), and how one step runs (forward). Adding an architecture
// is one short *_arch.cpp file and one line in arch_table.cpp; nothing else
// switches on the architecture name.
#pragma once

#include "backend.h"
#include "model_config.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kestrel::model {

using backend::Weight;

// Per-layer weights; an architecture fills the ones it uses.
struct LayerWeights {
    const Weight* attnNorm = nullptr;
    const Weight* wq = nullptr;
    const Weight* wk = nullptr;
    const Weight* wv = nullptr;
    const Weight* wo = nullptr;
    const Weight* bq = nullptr;
    const Weight* bk = nullptr;
    const Weight* bv = nullptr;
    const Weight* qNorm = nullptr;
    const Weight* kNorm = nullptr;
    const Weight* postAttnNorm = nullptr;
    const Weight* ffnNorm = nullptr;
    const Weight* ffnGate = nullptr;
    const Weight* ffnUp = nullptr;
    const Weight* ffnDown = nullptr;
    const Weight* postFfnNorm = nullptr;
};

struct ModelWeights {
    const Weight* tokenEmbd = nullptr;
    const Weight* outputNorm = nullptr;
    const Weight* output = nullptr;     // token_embd when tied
    const Weight* ropeFreqs = nullptr;  // optional per-pair frequency divisors
    std::vector<LayerWeights> layers;
};

// One tensor an architecture expects: its GGUF name, its dims in GGUF order
// (dims[0] = row length) and where the loaded weight goes.
struct TensorSpec {
    std::string name;
    std::vector<uint64_t> dims;
    const Weight** slot = nullptr;
    bool required = true;
};

// The scratch of one batch runner, sized once for maxTokens tokens of up to
// maxSeqs sequences. seqRows/tables/tableWidth: see backend::KvBatch.
struct Scratch {
    std::unique_ptr<backend::Tensor> x, xn, q, k, v, attn, tmp, gate, up;
    std::unique_ptr<backend::IndexTensor> ids, positions, seqRows, tables;
    int32_t tableWidth = 0;

    backend::KvBatch kvBatch() const { return backend::KvBatch{positions.get(), seqRows.get(), tables.get(), tableWidth}; }
};

// Everything a forward recipe needs for one step of `tokens` tokens. The
// recipe leaves the final-normed hidden states in scratch.x; the runner
// projects them to logits.
struct Step {
    backend::Backend& be;
    const ModelConfig& cfg;
    const ModelWeights& w;
    Scratch& s;
    runtime::KvCache& kv;
};

struct ArchSpec {
    std::string_view name;
    // Arch-specific keys and defaults on top of readCommonConfig.
    Status (*configure)(const ConfigReader& r, ModelConfig& c);
    // The tensors of this architecture (shapes from the config).
    void (*tensors)(const ModelConfig& c, ModelWeights& w, std::vector<TensorSpec>& out);
    void (*forward)(Step& step);
};

// nullptr when the architecture is not supported.
const ArchSpec* findArch(std::string_view name);
std::string supportedArchNames();  // "llama, qwen2, qwen3, gemma3"

// Rows of the table (defined in the *_arch.cpp files).
extern const ArchSpec kLlamaArch;
extern const ArchSpec kQwen2Arch;
extern const ArchSpec kQwen3Arch;
extern const ArchSpec kGemma3Arch;

// Tensor lists shared by the llama family: token_embd, output_norm, output
// (optional: tied), and per layer attn_norm, attn_q/k/v/output, ffn_norm,
// ffn_gate/up/down.
void llamaFamilyTensors(const ModelConfig& c, ModelWeights& w, std::vector<TensorSpec>& out);
std::string layerTensorName(int il, std::string_view suffix);  // "blk.3.attn_q.weight"

}  // namespace kestrel::model
