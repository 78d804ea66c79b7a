// A model's validated configuration and its weights on one backend.
//
// load() reads general.architecture, finds its row in the ArchSpec table,
// reads and checks the hyperparameters, checks every expected tensor
// (present, shape, type the backend can compute with) and uploads it. Errors
// name the file and the key or tensor:
//   "model.gguf: missing key 'llama.block_count' (required by architecture llama)"
//   "model.gguf: tensor 'blk.3.attn_q.weight' has shape [576, 500], expected [576, 576]"
//
// Ownership: the LoadedModel keeps the GgufFile alive (CPU weights point into
// its mapping); weights belong to the backend passed to load(), which must
// outlive the model. Thread-safety: immutable after load; any number of
// ModelRunners may share it (each with a backend that can read its weights).
#pragma once

#include "arch_table.h"
#include "backend.h"
#include "gguf_file.h"
#include "model_config.h"

#include <functional>
#include <memory>

namespace kestrel::model {

class LoadedModel {
public:
    // progress(fraction in [0, 1]) is called while loading; returning false cancels (ErrorCode::Cancelled).
    static Result<std::shared_ptr<LoadedModel>> load(std::shared_ptr<gguf::GgufFile> file, backend::Backend& be,
                                                     const std::function<bool(float)>& progress = {});

    const ModelConfig& config() const { return config_; }
    const ArchSpec& arch() const { return *arch_; }
    const ModelWeights& weights() const { return weights_; }
    const gguf::GgufFile& file() const { return *file_; }
    backend::Backend& backend() const { return *backend_; }

private:
    LoadedModel() = default;
    std::shared_ptr<gguf::GgufFile> file_;
    backend::Backend* backend_ = nullptr;
    const ArchSpec* arch_ = nullptr;
    ModelConfig config_;
    ModelWeights weights_;
    std::vector<std::unique_ptr<backend::Weight>> owned_;
};

}  // namespace kestrel::model
