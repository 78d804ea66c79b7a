// One forward step over tokens of several sequences at once (continuous batching).
//
// Each sequence contributes a chunk: its block table in the shared KV cache,
// the position of its first new token, the tokens, and which logits it wants.
// All chunks run through the weights together (the matmuls read each weight
// once per step, whatever the number of sequences); attention reads each
// token's own sequence through its block table (backend::KvBatch).
//
// Usage (a scheduler step: two decoding sequences and a prefill chunk):
//   SeqChunk chunks[] = {{tableA, posA, {&tokA, 1}, LogitsWanted::Last},
//                        {tableB, posB, {&tokB, 1}, LogitsWanted::Last},
//                        {tableC, 512, promptC.subspan(512, 256), LogitsWanted::None}};
//   runner->step(chunks, logits);  // logits: 2 rows of vocabSize, A then B
//
// Logits are returned per chunk in chunk order: one row for Last, one per
// token for All. Wanted rows that are adjacent in the step (put single-token
// decode chunks first) are projected together, so 16 decoding sequences read
// the output matrix once.
//
// The caller owns the block bookkeeping: every block a chunk writes must be
// the sequence's own (not shared); positions before `start` must already be
// stored. step() validates sizes, ids and tables and fails without touching
// the cache.
//
// Ownership: keeps the LoadedModel alive; `backend` and `kv` must outlive the
// runner. Thread-safety: none; one thread steps a runner at a time.
#pragma once

#include "loaded_model.h"

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace kestrel::model {

enum class LogitsWanted { None, Last, All };

struct SeqChunk {
    std::span<const int32_t> table;  // block ids covering positions < start + tokens.size()
    int64_t start = 0;               // position of tokens[0]
    std::span<const int32_t> tokens;
    LogitsWanted logits = LogitsWanted::None;
    // Tokens guessed to come next, checked in this step (speculative decoding):
    // computed as decode rows, so each row's logits are what a one-token step
    // would give. Such a chunk goes with the decode chunks, before any prefill.
    bool speculative = false;
};

// The KV cache shape of a model: its layers, kv heads and head size.
runtime::KvCacheSpec kvCacheSpecFor(const ModelConfig& c, int64_t capacity, runtime::KvStorage storage);

// What a step returns for its wanted rows, in order: whole rows of logits, or
// (topK > 0, for sampling without moving whole rows) each row's topK best in
// rank order (backend::Backend::downloadTop).
struct StepLogits {
    int32_t topK = 0;
    std::vector<float> rows;    // wanted rows x vocabSize, when topK == 0
    std::vector<TopLogit> top;  // wanted rows x topK, when topK > 0
};

struct BatchRunnerOptions {
    int maxTokens = 256;         // tokens per step, all chunks together
    int maxSeqs = 16;            // chunks per step
    int64_t maxPositions = 0;    // longest sequence (sets the table width); 0: the model's trained context
};

class BatchRunner {
public:
    static Result<std::unique_ptr<BatchRunner>> create(std::shared_ptr<const LoadedModel> model, backend::Backend& be,
                                                       runtime::KvCache& kv, const BatchRunnerOptions& options);
    ~BatchRunner();

    Status step(std::span<const SeqChunk> chunks, StepLogits& out);
    // Whole rows of logits.
    Status step(std::span<const SeqChunk> chunks, std::vector<float>& logitsOut);

    const LoadedModel& model() const { return *model_; }
    backend::Backend& backend() const { return *be_; }
    runtime::KvCache& kvCache() const { return *kv_; }
    int maxTokens() const { return maxTokens_; }
    int maxSeqs() const { return maxSeqs_; }
    int64_t maxPositions() const { return maxPositions_; }
    int vocabSize() const { return model_->config().vocabSize; }

private:
    BatchRunner() = default;
    Status validate(std::span<const SeqChunk> chunks) const;
    // Logits of rows [row, row + count) of the step into wanted rows [slot, slot + count) of `out`;
    // `recorded`: the backend replays a held step (replayStep) that already projects them.
    Status project(int64_t row, int64_t count, StepLogits& out, size_t slot, bool recorded);

    std::shared_ptr<const LoadedModel> model_;
    backend::Backend* be_ = nullptr;
    runtime::KvCache* kv_ = nullptr;
    Scratch scratch_;
    std::unique_ptr<backend::Tensor> lastRows_, logits_;
    std::vector<int32_t> ids_, positions_, seqRows_, tables_;
    std::vector<int64_t> wanted_;  // rows whose logits return, ascending
    std::vector<std::pair<size_t, size_t>> runs_;  // [begin, end) of wanted_ per projection
    std::vector<int64_t> shape_;                   // the step's Backend::replayStep shape
    int64_t id_ = 0;                               // this runner in replayStep shapes
    int maxTokens_ = 0, maxSeqs_ = 0, logitRows_ = 0;
    int64_t decodeRows_ = 0, loneRows_ = 0;  // this step's leading decode rows, and lone ones (Backend::setDecodeRows)
    int64_t maxPositions_ = 0;
};

}  // namespace kestrel::model
