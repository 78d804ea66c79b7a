// llama (and SmolLM2, Mistral-style dense models): pre-norm, SwiGLU.
// GGUF converters permute Q/K rows so RoPE rotates adjacent pairs ("normal" mode).
#include "forward_blocks.h"

namespace kestrel::model {
namespace {

Status configure(const ConfigReader&, ModelConfig& c) {
    c.ropeNeox = false;
    return Status::ok();
}

void forward(Step& st) {
    embedTokens(st);
    for (int il = 0; il < st.cfg.nLayer; ++il) preNormLayer(st, il, backend::GluKind::Silu);
    finalNorm(st);
}

}  // namespace

const ArchSpec kLlamaArch{"llama", configure, llamaFamilyTensors, forward};

}  // namespace kestrel::model
