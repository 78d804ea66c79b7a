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
    r->be_ = &be;
    r->contextLength_ = options.contextLength ? options.contextLength : c.contextLength;
    r->maxBatch_ = options.maxBatch;
    // Logits are projected a few rows at a time: a 262k vocabulary times a full
    // batch would dominate the scratch memory.
    r->logitRows_ = std::min(options.maxBatch, 4);

    runtime::KvCacheSpec ks;
    ks.layers = c.nLayer;
    ks.kvHeads = c.nHeadKv;
    ks.headDim = c.headDim;
    ks.capacity = r->contextLength_;
    ks.storage = options.kvStorage;
    auto kv = be.createKvCache(ks);
    if (!kv) return kv.status();
    r->kv_ = std::move(kv).value();

    const int64_t b = options.maxBatch;
    const int64_t qDim = static_cast<int64_t>(c.nHead) * c.headDim;
    const int64_t kvDim = static_cast<int64_t>(c.nHeadKv) * c.headDim;
    Scratch& s = r->scratch_;
    struct Want {
        std::unique_ptr<backend::Tensor>* t;
        int64_t rows, cols;
    };
    const Want wants[] = {{&s.x, b, c.nEmbd},   {&s.xn, b, c.nEmbd},  {&s.q, b, qDim},      {&s.k, b, kvDim},
                          {&s.v, b, kvDim},     {&s.attn, b, qDim},   {&s.tmp, b, c.nEmbd}, {&s.gate, b, c.nFf},
                          {&s.up, b, c.nFf},    {&r->lastRows_, r->logitRows_, c.nEmbd},
                          {&r->logits_, r->logitRows_, c.vocabSize}};
    for (const Want& w : wants) {
        auto t = be.createTensor(w.rows, w.cols);
        if (!t) return t.status();
        *w.t = std::move(t).value();
    }
    auto ids = be.createIndexTensor(b);
    if (!ids) return ids.status();
    s.ids = std::move(ids).value();
    auto pos = be.createIndexTensor(b);
    if (!pos) return pos.status();
    s.positions = std::move(pos).value();
    r->positionsHost_.resize(static_cast<size_t>(b));
    return r;
}

ModelRunner::~ModelRunner() = default;

void ModelRunner::truncate(int64_t n) {
    if (n < 0) n = 0;
    if (n >= position_) return;
    position_ = n;
    kv_->truncate(n);
}

Status ModelRunner::project(int64_t row, int64_t count, float* out) {
    const ModelConfig& c = model_->config();
    be_->copyRows(*scratch_.x, row, count, *lastRows_);
    be_->matmul(*model_->weights().output, *lastRows_, *logits_);
    if (c.finalSoftcap > 0.0f) be_->softcap(*logits_, c.finalSoftcap);
    return be_->download(*logits_, std::span<float>(out, static_cast<size_t>(count) * c.vocabSize));
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

    Step step{*be_, c, model_->weights(), scratch_, *kv_};
    for (int64_t done = 0; done < n;) {
        const int64_t chunk = std::min<int64_t>(maxBatch_, n - done);
        for (int64_t i = 0; i < chunk; ++i) positionsHost_[static_cast<size_t>(i)] = static_cast<int32_t>(position_ + i);
        KESTREL_RETURN_IF_ERROR(be_->upload(*scratch_.ids, tokens.subspan(static_cast<size_t>(done), static_cast<size_t>(chunk))));
        KESTREL_RETURN_IF_ERROR(be_->upload(*scratch_.positions, std::span<const int32_t>(positionsHost_.data(), static_cast<size_t>(chunk))));
        model_->arch().forward(step);
        position_ += chunk;
        kv_->setLength(position_);
        if (mode == LogitsMode::All) {
            for (int64_t r = 0; r < chunk; r += logitRows_) {
                const int64_t cnt = std::min<int64_t>(logitRows_, chunk - r);
                KESTREL_RETURN_IF_ERROR(project(r, cnt, logitsOut.data() + (done + r) * c.vocabSize));
            }
        } else if (done + chunk == n) {
            KESTREL_RETURN_IF_ERROR(project(chunk - 1, 1, logitsOut.data()));
        }
        done += chunk;
    }
    return Status::ok();
}

}  // namespace kestrel::model
