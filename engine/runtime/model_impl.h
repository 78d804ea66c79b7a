// What a kestrel::Model holds: the file, the backend, the loaded weights and
// the tokenizer. Internal to the engine (Session reaches it via Model::impl()).
#pragma once

#include "backend.h"
#include "gguf_file.h"
#include "kestrel/engine.h"
#include "kv_pool.h"
#include "loaded_model.h"
#include "tokenizer.h"

#include <memory>
#include <mutex>

namespace kestrel {

struct Model::Impl {
    std::shared_ptr<gguf::GgufFile> file;
    std::unique_ptr<backend::Backend> backend;  // destroyed after `loaded` (declared before it)
    std::shared_ptr<model::LoadedModel> loaded;
    std::unique_ptr<Tokenizer> tokenizer;       // null when the vocabulary type is not supported yet
    Status tokenizerStatus;                     // why it is null
    ModelInfo info;
    // KV memory and prefix cache of all sessions; its mutex serialises steps
    // (the backend runs one op at a time). Declared after `loaded`: destroyed first.
    std::unique_ptr<runtime::KvPool> pool;
    std::unique_ptr<runtime::SnapshotStore> snapshots;  // null without LoadOptions::snapshotDir
};

// Parses "cpu", "cuda", "cuda:N"; the CUDA backend is not built yet.
Result<std::unique_ptr<backend::Backend>> createBackend(const std::string& device, int threads);

// Fills ModelInfo from the file and the loaded configuration.
ModelInfo describeModel(const gguf::GgufFile& file, const model::ModelConfig& config, const std::string& backendName);

}  // namespace kestrel
