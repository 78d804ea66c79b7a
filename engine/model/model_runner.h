// One sequence's state on a loaded model: its KV cache, its scratch, its position.
//
// Usage:
//   auto runner = ModelRunner::create(model, backend, /*contextLength*/ 4096, /*maxBatch*/ 64);
//   std::vector<float> logits;
//   runner->forward(promptIds, LogitsMode::LastOnly, logits);   // prefill: logits of the last token
//   runner->forward({&next, 1}, LogitsMode::LastOnly, logits);  // decode one token
//   runner->truncate(n);                                        // rewind to the first n positions
//
// forward() appends tokens at position(), splitting them into chunks of at
// most maxBatch; it fails (without changing any state) when the tokens would
// pass the context length or an id is outside the vocabulary. All buffers are
// allocated by create(); a step allocates nothing (logitsOut is resized,
// which only allocates when it grows).
//
// The runner owns a private KV cache of contextLength positions, reached
// through an identity block table: one sequence, no sharing. Sequences that
// share a pool and its prefix cache use BatchRunner with runtime::KvPool.
//
// Ownership: keeps the LoadedModel alive; `backend` must outlive the runner and
// be able to read the model's weights: the backend the model was loaded on, or
// for a CPU-loaded model any CpuBackend (CPU weights are read-only host views),
// so several sequences can step at once, each on its own CpuBackend (own pool).
// Thread-safety: none; one thread steps a runner at a time, and a backend runs
// one runner's step at a time.
#pragma once

#include "batch_runner.h"
#include "loaded_model.h"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace kestrel::model {

enum class LogitsMode {
    LastOnly,  // logitsOut = vocabSize values for the last token
    All,       // logitsOut = tokens.size() * vocabSize values, token-major
};

struct RunnerOptions {
    int64_t contextLength = 0;  // 0: the model's trained context
    int maxBatch = 64;          // tokens per internal step (prefill chunk)
    runtime::KvStorage kvStorage = runtime::KvStorage::F16;
};

class ModelRunner {
public:
    static Result<std::unique_ptr<ModelRunner>> create(std::shared_ptr<const LoadedModel> model, backend::Backend& be,
                                                       const RunnerOptions& options);
    static Result<std::unique_ptr<ModelRunner>> create(std::shared_ptr<const LoadedModel> model, backend::Backend& be,
                                                       int64_t contextLength, int maxBatch);
    ~ModelRunner();

    Status forward(std::span<const int32_t> tokens, LogitsMode mode, std::vector<float>& logitsOut);

    int64_t position() const { return position_; }
    int64_t contextLength() const { return contextLength_; }
    int vocabSize() const { return model_->config().vocabSize; }
    // Forget positions >= n (no-op if n >= position()).
    void truncate(int64_t n);
    const LoadedModel& model() const { return *model_; }
    const runtime::KvCache& kvCache() const { return *kv_; }

    std::span<const int32_t> blockTable() const { return table_; }

private:
    ModelRunner() = default;

    std::shared_ptr<const LoadedModel> model_;
    std::unique_ptr<runtime::KvCache> kv_;
    std::unique_ptr<BatchRunner> batch_;
    std::vector<int32_t> table_;
    std::vector<float> chunkLogits_;
    int64_t contextLength_ = 0;
    int maxBatch_ = 0;
    int64_t position_ = 0;
};

}  // namespace kestrel::model
