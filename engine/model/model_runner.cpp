#include "model_runner.h"

#include <algorithm>

namespace kestrel::model {

Result<std::unique_ptr<ModelRunner>> ModelRunner::create(std::shared_ptr<const LoadedModel> model,
                                                         backend::Backend& be, int64_t contextLength, int maxBatch) {
    RunnerOptions o;
    o.contextLength = contextLength;
    o.maxBatch = maxBatch;
    return create(std::move(model), be, o);
}

Result<std::unique_ptr<ModelRunner>> ModelRunner::create(std::shared_ptr<const LoadedModel> model,
                                                         backend::Backend& be, const RunnerOptions& options) {
    if (!model) return Status(ErrorCode::InvalidArgument, "no model");
    if (options.maxBatch <= 0 || options.contextLength < 0)
        return Status(ErrorCode::InvalidArgument, "maxBatch must be positive and contextLength not negative");
    const ModelConfig& c = model->config();
    auto r = std::unique_ptr<ModelRunner>(new ModelRunner());
    r->model_ = model;
    r->contextLength_ = options.contextLength ? options.contextLength : c.contextLength;
    r->maxBatch_ = options.maxBatch;

    const runtime::KvCacheSpec ks = kvCacheSpecFor(c, r->contextLength_, options.kvStorage);
    auto kv = be.createKvCache(ks);
    if (!kv) return kv.status();
    r->kv_ = std::move(kv).value();
    r->table_.resize(static_cast<size_t>(ks.blocks()));
    for (size_t i = 0; i < r->table_.size(); ++i) r->table_[i] = static_cast<int32_t>(i);

    BatchRunnerOptions bo;
    bo.maxTokens = options.maxBatch;
    bo.maxSeqs = 1;
    bo.maxPositions = r->contextLength_;
    auto batch = BatchRunner::create(model, be, *r->kv_, bo);
    if (!batch) return batch.status();
    r->batch_ = std::move(batch).value();
    return r;
}

ModelRunner::~ModelRunner() = default;

void ModelRunner::truncate(int64_t n) {
    if (n < 0) n = 0;
    if (n < position_) position_ = n;
}

Status ModelRunner::forward(std::span<const int32_t> tokens, LogitsMode mode, std::vector<float>& logitsOut) {
    const ModelConfig& c = model_->config();
    const auto n = static_cast<int64_t>(tokens.size());
    if (n == 0) return Status(ErrorCode::InvalidArgument, "forward: no tokens");
    if (position_ + n > contextLength_)
        return Status(ErrorCode::InvalidArgument, "context full: " + std::to_string(position_) + " tokens + " +
                                                      std::to_string(n) + " new exceed the context length of " +
                                                      std::to_string(contextLength_));
    for (int32_t id : tokens)
        if (id < 0 || id >= c.vocabSize)
            return Status(ErrorCode::InvalidArgument, "token id " + std::to_string(id) +
                                                          " is outside the vocabulary (size " +
                                                          std::to_string(c.vocabSize) + ")");
    logitsOut.resize(static_cast<size_t>(mode == LogitsMode::All ? n : 1) * c.vocabSize);
    for (int64_t done = 0; done < n;) {
        const int64_t chunk = std::min<int64_t>(maxBatch_, n - done);
        SeqChunk ch;
        ch.table = table_;
        ch.start = position_;
        ch.tokens = tokens.subspan(static_cast<size_t>(done), static_cast<size_t>(chunk));
        const bool last = done + chunk == n;
        ch.logits = mode == LogitsMode::All ? LogitsWanted::All : (last ? LogitsWanted::Last : LogitsWanted::None);
        KESTREL_RETURN_IF_ERROR(batch_->step({&ch, 1}, chunkLogits_));
        position_ += chunk;
        if (mode == LogitsMode::All)
            std::copy(chunkLogits_.begin(), chunkLogits_.end(), logitsOut.begin() + done * c.vocabSize);
        else if (last)
            std::copy(chunkLogits_.begin(), chunkLogits_.end(), logitsOut.begin());
        done += chunk;
    }
    return Status::ok();
}

}  // namespace kestrel::model
