#include "batch_runner.h"

#include <algorithm>
#include <atomic>
#include <iterator>

namespace kestrel::model {

runtime::KvCacheSpec kvCacheSpecFor(const ModelConfig& c, int64_t capacity, runtime::KvStorage storage) {
    runtime::KvCacheSpec spec;
    spec.layers = c.nLayer;
    spec.kvHeads = c.nHeadKv;
    spec.headDim = c.headDim;
    spec.capacity = capacity;
    spec.storage = storage;
    return spec;
}

Result<std::unique_ptr<BatchRunner>> BatchRunner::create(std::shared_ptr<const LoadedModel> model, backend::Backend& be,
                                                         runtime::KvCache& kv, const BatchRunnerOptions& options) {
    if (!model) return Status(ErrorCode::InvalidArgument, "no model");
    if (options.maxTokens <= 0 || options.maxSeqs <= 0 || options.maxPositions < 0)
        return Status(ErrorCode::InvalidArgument, "batch runner: maxTokens and maxSeqs must be positive");
    const ModelConfig& c = model->config();
    const auto& ks = kv.spec();
    if (ks.layers != c.nLayer || ks.kvHeads != c.nHeadKv || ks.headDim != c.headDim)
        return Status(ErrorCode::InvalidArgument, "batch runner: the KV cache was made for another model shape");
    auto r = std::unique_ptr<BatchRunner>(new BatchRunner());
    static std::atomic<int64_t> runners{0};
    r->id_ = ++runners;  // never reused, unlike an address: a held step must not pass to a later runner
    r->model_ = model;
    r->be_ = &be;
    r->kv_ = &kv;
    r->maxTokens_ = options.maxTokens;
    r->maxSeqs_ = std::min(options.maxSeqs, options.maxTokens);
    r->maxPositions_ = options.maxPositions ? options.maxPositions : c.contextLength;
    // Logits are projected a few rows at a time: a 262k vocabulary times a full
    // batch would dominate the scratch memory. 16 rows cover a full decode step
    // of 16 sequences in one pass over the output matrix.
    r->logitRows_ = std::min(options.maxTokens, 16);

    Scratch& s = r->scratch_;
    s.tableWidth = static_cast<int32_t>((r->maxPositions_ + ks.blockTokens - 1) / ks.blockTokens);
    const int64_t b = options.maxTokens;
    const int64_t qDim = static_cast<int64_t>(c.nHead) * c.headDim;
    const int64_t kvDim = static_cast<int64_t>(c.nHeadKv) * c.headDim;
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
    // Uploaded together before every step (in this order, see step()).
    const int64_t sizes[] = {b, b, b, static_cast<int64_t>(r->maxSeqs_) * s.tableWidth};
    auto idx = be.createIndexTensors(sizes);
    if (!idx) return idx.status();
    std::unique_ptr<backend::IndexTensor>* targets[] = {&s.ids, &s.positions, &s.seqRows, &s.tables};
    for (size_t i = 0; i < std::size(targets); ++i) *targets[i] = std::move(idx.value()[i]);
    r->ids_.reserve(static_cast<size_t>(b));
    r->positions_.reserve(static_cast<size_t>(b));
    r->seqRows_.reserve(static_cast<size_t>(b));
    r->tables_.resize(static_cast<size_t>(r->maxSeqs_) * static_cast<size_t>(s.tableWidth));
    return r;
}

BatchRunner::~BatchRunner() = default;

Status BatchRunner::validate(std::span<const SeqChunk> chunks) const {
    const ModelConfig& c = model_->config();
    const auto& ks = kv_->spec();
    if (chunks.empty()) return Status(ErrorCode::InvalidArgument, "forward: no tokens");
    if (static_cast<int>(chunks.size()) > maxSeqs_)
        return Status(ErrorCode::InvalidArgument, "forward: " + std::to_string(chunks.size()) +
                                                      " sequences in one step; the runner holds " +
                                                      std::to_string(maxSeqs_));
    int64_t total = 0;
    for (const SeqChunk& ch : chunks) {
        const auto n = static_cast<int64_t>(ch.tokens.size());
        if (n == 0) return Status(ErrorCode::InvalidArgument, "forward: a sequence has no tokens");
        total += n;
        if (ch.start < 0 || ch.start + n > maxPositions_)
            return Status(ErrorCode::InvalidArgument, "context full: " + std::to_string(ch.start) + " tokens + " +
                                                          std::to_string(n) + " new exceed the context length of " +
                                                          std::to_string(maxPositions_));
        const int64_t blocksNeeded = (ch.start + n + ks.blockTokens - 1) / ks.blockTokens;
        if (blocksNeeded > static_cast<int64_t>(ch.table.size()))
            return Status(ErrorCode::Internal, "forward: the block table does not cover the new positions");
        for (int64_t i = 0; i < blocksNeeded; ++i)
            if (ch.table[static_cast<size_t>(i)] < 0 || ch.table[static_cast<size_t>(i)] >= ks.blocks())
                return Status(ErrorCode::Internal, "forward: block id outside the KV cache");
        for (int32_t id : ch.tokens)
            if (id < 0 || id >= c.vocabSize)
                return Status(ErrorCode::InvalidArgument, "token id " + std::to_string(id) +
                                                              " is outside the vocabulary (size " +
                                                              std::to_string(c.vocabSize) + ")");
    }
    if (total > maxTokens_)
        return Status(ErrorCode::InvalidArgument, "forward: " + std::to_string(total) +
                                                      " tokens in one step; the runner holds " +
                                                      std::to_string(maxTokens_));
    return Status::ok();
}

Status BatchRunner::project(int64_t row, int64_t count, StepLogits& out, size_t slot, bool recorded) {
    const ModelConfig& c = model_->config();
    if (recorded) {
        logits_->setRows(count);  // what recording the projection would have set (the download checks it)
    } else {
        be_->copyRows(*scratch_.x, row, count, *lastRows_);
        // The step's decode rows are its first rows, so they lead any run that contains them.
        be_->setDecodeRows(std::clamp<int64_t>(decodeRows_ - row, 0, count), std::clamp<int64_t>(loneRows_ - row, 0, count));
        be_->matmul(*model_->weights().output, *lastRows_, *logits_);
        if (c.finalSoftcap > 0.0f) be_->softcap(*logits_, c.finalSoftcap);
    }
    const auto n = static_cast<size_t>(count);
    if (out.topK > 0)
        return be_->downloadTop(*logits_, out.topK, std::span<TopLogit>(out.top).subspan(slot * size_t(out.topK), n * size_t(out.topK)));
    return be_->download(*logits_, std::span<float>(out.rows).subspan(slot * size_t(c.vocabSize), n * size_t(c.vocabSize)));
}

Status BatchRunner::step(std::span<const SeqChunk> chunks, std::vector<float>& logitsOut) {
    StepLogits out;
    out.rows.swap(logitsOut);
    const Status s = step(chunks, out);
    logitsOut.swap(out.rows);
    return s;
}

Status BatchRunner::step(std::span<const SeqChunk> chunks, StepLogits& out) {
    KESTREL_RETURN_IF_ERROR(validate(chunks));
    if (out.topK < 0 || out.topK > model_->config().vocabSize)
        return Status(ErrorCode::InvalidArgument, "forward: top-k of " + std::to_string(out.topK) + " for a vocabulary of " +
                                                      std::to_string(model_->config().vocabSize));
    const ModelConfig& c = model_->config();
    const int32_t blockTokens = kv_->spec().blockTokens;
    const int32_t width = scratch_.tableWidth;

    // Host copies of the step's indices; `wanted` lists the rows whose logits return, ascending.
    ids_.clear();
    positions_.clear();
    seqRows_.clear();
    std::vector<int64_t>& wanted = wanted_;
    wanted.clear();
    int64_t maxKeys = 0;  // the most keys a row of this step attends to
    for (size_t si = 0; si < chunks.size(); ++si) {
        const SeqChunk& ch = chunks[si];
        const auto n = static_cast<int64_t>(ch.tokens.size());
        maxKeys = std::max<int64_t>(maxKeys, ch.start + n);
        const auto firstRow = static_cast<int64_t>(ids_.size());
        for (int64_t i = 0; i < n; ++i) {
            ids_.push_back(ch.tokens[static_cast<size_t>(i)]);
            positions_.push_back(static_cast<int32_t>(ch.start + i));
            seqRows_.push_back(static_cast<int32_t>(si));
        }
        const int64_t blocksNeeded = (ch.start + n + blockTokens - 1) / blockTokens;
        std::copy_n(ch.table.begin(), blocksNeeded, tables_.begin() + static_cast<int64_t>(si) * width);
        if (ch.logits == LogitsWanted::Last) wanted.push_back(firstRow + n - 1);
        if (ch.logits == LogitsWanted::All)
            for (int64_t i = 0; i < n; ++i) wanted.push_back(firstRow + i);
    }
    if (out.topK > 0) out.top.resize(wanted.size() * static_cast<size_t>(out.topK));
    else out.rows.resize(wanted.size() * static_cast<size_t>(c.vocabSize));

    Scratch& s = scratch_;
    KESTREL_RETURN_IF_ERROR(be_->upload(*s.ids, ids_));
    KESTREL_RETURN_IF_ERROR(be_->upload(*s.positions, positions_));
    KESTREL_RETURN_IF_ERROR(be_->upload(*s.seqRows, seqRows_));
    KESTREL_RETURN_IF_ERROR(
        be_->upload(*s.tables, std::span<const int32_t>(tables_.data(), chunks.size() * static_cast<size_t>(width))));
    // Leading single-token chunks that want their logits are decode rows (the
    // scheduler puts decode chunks first): the backend computes them apart from
    // any prefill rows, so a sequence decodes the same alone or beside others.
    // Speculative chunks count as decode rows too; the lone ones are the single-token chunks before any of them.
    decodeRows_ = loneRows_ = 0;
    for (const SeqChunk& ch : chunks) {
        const bool lone = ch.tokens.size() == 1 && ch.logits == LogitsWanted::Last;
        if (!lone && !ch.speculative) break;
        if (lone && loneRows_ == decodeRows_) ++loneRows_;
        decodeRows_ += static_cast<int64_t>(ch.tokens.size());
    }
    // Runs of adjacent wanted rows, at most logitRows_ per projection.
    runs_.clear();
    for (size_t i = 0; i < wanted.size();) {
        size_t j = i + 1;
        while (j < wanted.size() && wanted[j] == wanted[j - 1] + 1 && static_cast<int>(j - i) < logitRows_) ++j;
        runs_.push_back({i, j});
        i = j;
    }
    // The ops recorded below depend on this runner and on the step's shape only
    // (token ids, positions and block tables travel as uploaded values), so a
    // backend holding the same shape's step may run it without the recording.
    // One projection only: the held step ends at its download.
    const int64_t keyVariant = be_->setKeyBound(maxKeys);
    bool recorded = false;
    if (runs_.size() == 1) {
        shape_.assign({id_, decodeRows_, loneRows_, out.topK, static_cast<int64_t>(wanted.size()), keyVariant});
        for (const SeqChunk& ch : chunks) {
            shape_.push_back(static_cast<int64_t>(ch.tokens.size()));
            shape_.push_back(static_cast<int64_t>(ch.logits));
        }
        recorded = be_->replayStep(shape_);
    }
    if (!recorded) {
        be_->setDecodeRows(decodeRows_, loneRows_);
        Step st{*be_, c, model_->weights(), s, *kv_};
        model_->arch().forward(st);
    }
    for (const auto& [i, j] : runs_) {
        const Status projected = project(wanted[i], static_cast<int64_t>(j - i), out, i, recorded);
        if (!projected.isOk()) {
            be_->setDecodeRows(0, 0);
            be_->setKeyBound(0);
            return projected;
        }
    }
    be_->setDecodeRows(0, 0);
    be_->setKeyBound(0);
    return Status::ok();
}

}  // namespace kestrel::model
