// llama (and SmolLM2, Mistral-style dense models): pre-norm, SwiGLU.
// GGUF converters permute Q/K rows so RoPE rotates adjacent pairs ("normal" mode).
#include "forward_blocks.h"

namespace kestrel::model {
namespace {

Status configure(const ConfigReader&, ModelConfig& c) {
    c.ropeNeox = false;
    return Status::ok();
}

}  // namespace

const ArchSpec kLlamaArch{"llama", configure, llamaFamilyTensors, preNormSwiGluForward};

}  // namespace kestrel::model
