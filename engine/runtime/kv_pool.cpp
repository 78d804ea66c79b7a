#include "kv_pool.h"

#include "model_fingerprint.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace kestrel::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Until a restore has been timed: a cold read from an ordinary SSD.
constexpr double kAssumedRestoreBytesPerMs = 200.0 * 1024;  // 200 MB/s

void ema(double& average, double sample) { average = average == 0 ? sample : 0.7 * average + 0.3 * sample; }

}  // namespace

const char* kvLayoutVersion() { return "kestrel-0.1 kv-paged-v1"; }

Result<std::unique_ptr<KvPool>> KvPool::create(std::shared_ptr<const model::LoadedModel> model, backend::Backend& be,
                                               const KvPoolOptions& options) {
    if (!model) return Status(ErrorCode::InvalidArgument, "no model");
    const model::ModelConfig& c = model->config();
    if (options.maxPositions <= 0 || options.tokens < options.maxPositions)
        return Status(ErrorCode::InvalidArgument, "KV pool: " + std::to_string(options.tokens) +
                                                      " positions cannot hold a sequence of " +
                                                      std::to_string(options.maxPositions));
    auto pool = std::unique_ptr<KvPool>(new KvPool());
    pool->model_ = model;
    pool->be_ = &be;
    const KvCacheSpec spec = model::kvCacheSpecFor(c, options.tokens, options.storage);
    auto cache = be.createKvCache(spec);
    if (!cache) return cache.status();
    pool->cache_ = std::move(cache).value();

    std::string fingerprint = "unnamed";
    if (!options.modelPath.empty()) {
        auto fp = modelFingerprint(options.modelPath);
        if (!fp) return fp.status();
        fingerprint = std::move(fp).value();
    }
    pool->tag_ = makeSnapshotTag(fingerprint, kvLayoutVersion(), pool->cache_->spec());
    // The salt keeps the prefix cache of another model or KV precision apart; it
    // only has to be stable for this process, snapshots carry the full tag.
    const uint64_t salt = std::hash<std::string>{}(fingerprint + "/" + std::to_string(static_cast<int>(spec.storage)));
    pool->blocks_ = std::make_unique<KvBlockManager>(static_cast<int32_t>(pool->cache_->spec().blocks()),
                                                     pool->cache_->spec().blockTokens, salt);

    model::BatchRunnerOptions bo;
    bo.maxTokens = options.maxStepTokens;
    bo.maxSeqs = options.maxSeqs;
    bo.maxPositions = options.maxPositions;
    auto runner = model::BatchRunner::create(model, be, *pool->cache_, bo);
    if (!runner) return runner.status();
    pool->runner_ = std::move(runner).value();
    return pool;
}

KvPool::~KvPool() = default;

KvPool::Sequence* KvPool::find(int32_t seq) {
    auto it = sequences_.find(seq);
    return it == sequences_.end() ? nullptr : &it->second;
}
const KvPool::Sequence* KvPool::find(int32_t seq) const {
    auto it = sequences_.find(seq);
    return it == sequences_.end() ? nullptr : &it->second;
}

int32_t KvPool::open() {
    std::lock_guard lock(mutex_);
    const int32_t id = nextSeq_++;
    sequences_[id].blocks = blocks_->createSequence();
    return id;
}

void KvPool::close(int32_t seq) {
    std::lock_guard lock(mutex_);
    if (Sequence* s = find(seq)) {
        blocks_->release(s->blocks);
        sequences_.erase(seq);
    }
}

Result<int32_t> KvPool::fork(int32_t seq) {
    std::lock_guard lock(mutex_);
    const Sequence* s = find(seq);
    if (!s) return Status(ErrorCode::InvalidArgument, "fork: unknown sequence");
    const SeqId forked = blocks_->fork(s->blocks);
    if (forked == kInvalidSeqId) return Status(ErrorCode::Internal, "fork: the block manager refused");
    const int32_t id = nextSeq_++;
    Sequence& f = sequences_[id];
    f.blocks = forked;
    f.tokens = find(seq)->tokens;
    return id;
}

int64_t KvPool::reuse(int32_t seq, std::span<const int32_t> prompt, int64_t limit) {
    std::lock_guard lock(mutex_);
    Sequence* s = find(seq);
    if (!s) return 0;
    limit = std::clamp<int64_t>(limit, 0, static_cast<int64_t>(prompt.size()));
    int64_t own = 0;
    while (own < limit && own < static_cast<int64_t>(s->tokens.size()) && s->tokens[size_t(own)] == prompt[size_t(own)]) ++own;
    // Another sequence (or an earlier, closed one) may have left a longer prefix in the cache.
    const SeqId probe = blocks_->createSequence();
    const int64_t cached = blocks_->attachPrefix(probe, prompt.first(static_cast<size_t>(limit)));
    if (cached > own) {
        blocks_->release(s->blocks);
        s->blocks = probe;
        s->tokens.assign(prompt.begin(), prompt.begin() + cached);
        return cached;
    }
    blocks_->release(probe);
    blocks_->truncate(s->blocks, own);
    s->tokens.resize(static_cast<size_t>(own));
    return own;
}

void KvPool::truncate(int32_t seq, int64_t n) {
    std::lock_guard lock(mutex_);
    Sequence* s = find(seq);
    if (!s || n >= static_cast<int64_t>(s->tokens.size())) return;
    n = std::max<int64_t>(n, 0);
    blocks_->truncate(s->blocks, n);
    s->tokens.resize(static_cast<size_t>(n));
}

Status KvPool::reserveLocked(Sequence& s, int64_t newLength) {
    copies_.clear();
    KESTREL_RETURN_IF_ERROR(blocks_->reserve(s.blocks, newLength, copies_));
    // Copies run before the next reserve: a copied-from block may be handed out again.
    for (const BlockCopy& c : copies_) KESTREL_RETURN_IF_ERROR(be_->copyKvBlock(*cache_, c.src, c.dst));
    return Status::ok();
}

Status KvPool::step(std::span<const PoolChunk> chunks, std::vector<float>& logits) {
    model::StepLogits out;
    out.rows.swap(logits);
    const Status s = step(chunks, out);
    logits.swap(out.rows);
    return s;
}

Status KvPool::step(std::span<const PoolChunk> chunks, model::StepLogits& logits) {
    std::lock_guard lock(mutex_);
    std::vector<Sequence*>& seqs = stepSeqs_;
    seqs.clear();
    int64_t total = 0;
    for (const PoolChunk& ch : chunks) {
        Sequence* s = find(ch.seq);
        if (!s) return Status(ErrorCode::InvalidArgument, "step: unknown sequence");
        if (std::find(seqs.begin(), seqs.end(), s) != seqs.end())
            return Status(ErrorCode::InvalidArgument, "step: a sequence appears twice");
        const int64_t newLength = static_cast<int64_t>(s->tokens.size() + ch.tokens.size());
        if (newLength > runner_->maxPositions())
            return Status(ErrorCode::InvalidArgument, "context full: " + std::to_string(s->tokens.size()) +
                                                          " tokens + " + std::to_string(ch.tokens.size()) +
                                                          " new exceed the context length of " +
                                                          std::to_string(runner_->maxPositions()));
        KESTREL_RETURN_IF_ERROR(reserveLocked(*s, newLength));
        seqs.push_back(s);
        total += static_cast<int64_t>(ch.tokens.size());
    }
    std::vector<model::SeqChunk>& batch = stepBatch_;
    batch.resize(chunks.size());
    for (size_t i = 0; i < chunks.size(); ++i) {
        batch[i].table = blocks_->table(seqs[i]->blocks);
        batch[i].start = static_cast<int64_t>(seqs[i]->tokens.size());
        batch[i].tokens = chunks[i].tokens;
        batch[i].logits = chunks[i].logits;
        batch[i].speculative = chunks[i].speculative;
    }
    const auto start = Clock::now();
    KESTREL_RETURN_IF_ERROR(runner_->step(batch, logits));
    if (total >= 64) ema(prefillTokensPerMs_, static_cast<double>(total) / std::max(msSince(start), 1e-3));
    for (size_t i = 0; i < chunks.size(); ++i) {
        seqs[i]->tokens.insert(seqs[i]->tokens.end(), chunks[i].tokens.begin(), chunks[i].tokens.end());
        blocks_->commit(seqs[i]->blocks, seqs[i]->tokens);
    }
    return Status::ok();
}

std::vector<int32_t> KvPool::tokens(int32_t seq) const {
    std::lock_guard lock(mutex_);
    const Sequence* s = find(seq);
    return s ? s->tokens : std::vector<int32_t>{};
}

int64_t KvPool::length(int32_t seq) const {
    std::lock_guard lock(mutex_);
    const Sequence* s = find(seq);
    return s ? static_cast<int64_t>(s->tokens.size()) : 0;
}

bool KvPool::fits(int64_t tokens) const {
    const auto& spec = cache_->spec();
    return tokens <= runner_->maxPositions() && (tokens + spec.blockTokens - 1) / spec.blockTokens <= spec.blocks();
}

KvPoolStats KvPool::stats() const {
    std::lock_guard lock(mutex_);
    KvPoolStats st;
    st.blocks = blocks_->stats();
    st.blockTokens = cache_->spec().blockTokens;
    st.bytes = static_cast<int64_t>(cache_->bytes());
    st.sequences = static_cast<int32_t>(sequences_.size());
    return st;
}

void KvPool::clearCache() {
    std::lock_guard lock(mutex_);
    blocks_->clearCache();
}

double KvPool::estimatedPrefillMs(int64_t tokens) const {
    if (prefillTokensPerMs_ <= 0) return std::numeric_limits<double>::infinity();
    return static_cast<double>(tokens) / prefillTokensPerMs_;
}

Status KvPool::save(int32_t seq, SnapshotStore& store, const std::string& key) {
    std::lock_guard lock(mutex_);
    const Sequence* s = find(seq);
    if (!s) return Status(ErrorCode::InvalidArgument, "snapshot: unknown sequence");
    const auto n = static_cast<int64_t>(s->tokens.size());
    if (n == 0) return Status(ErrorCode::InvalidArgument, "snapshot: the conversation holds no tokens");
    std::vector<uint8_t> payload(static_cast<size_t>(n) * cache_->spec().bytesPerToken());
    KESTREL_RETURN_IF_ERROR(be_->readKv(*cache_, blocks_->table(s->blocks), n, payload));
    return store.save(key, tag_, s->tokens, payload);
}

Result<int64_t> KvPool::restore(int32_t seq, SnapshotStore& store, const std::string& key, std::string* note) {
    std::lock_guard lock(mutex_);
    Sequence* s = find(seq);
    if (!s) return Status(ErrorCode::InvalidArgument, "snapshot: unknown sequence");
    auto say = [&](const std::string& text) {
        if (note) *note = text;
    };
    auto peek = store.peekTokens(key, tag_);
    if (!peek) {
        if (peek.status().code() != ErrorCode::NotFound) say("snapshot ignored: " + peek.status().message());
        return int64_t{0};
    }
    const int64_t n = peek.value();
    if (n <= 0 || !fits(n)) {
        say("snapshot ignored: its " + std::to_string(n) + " tokens do not fit this session's context");
        return int64_t{0};
    }
    const double restoreMs = static_cast<double>(snapshotFileBytes(tag_, n)) /
                             (restoreBytesPerMs_ > 0 ? restoreBytesPerMs_ : kAssumedRestoreBytesPerMs);
    if (estimatedPrefillMs(n) < restoreMs) {
        say("snapshot skipped: re-prefilling " + std::to_string(n) + " tokens is estimated faster");
        return int64_t{0};
    }
    const auto start = Clock::now();
    auto snap = store.load(key, tag_);
    if (!snap) {
        say("snapshot ignored: " + snap.status().message());
        return int64_t{0};
    }
    const std::vector<int32_t>& tokens = snap.value().tokens;
    blocks_->release(s->blocks);
    s->blocks = blocks_->createSequence();
    s->tokens.clear();
    // Still cached from earlier in this run: nothing to write.
    const int64_t cached = blocks_->attachPrefix(s->blocks, tokens);
    if (cached + cache_->spec().blockTokens > n) {
        s->tokens.assign(tokens.begin(), tokens.begin() + cached);
        return cached;
    }
    blocks_->release(s->blocks);
    s->blocks = blocks_->createSequence();
    if (Status st = reserveLocked(*s, n); !st.isOk()) {
        say("snapshot ignored: " + st.message());
        return int64_t{0};
    }
    KESTREL_RETURN_IF_ERROR(be_->writeKv(*cache_, blocks_->table(s->blocks), n, snap.value().kv));
    s->tokens = tokens;
    blocks_->commit(s->blocks, s->tokens);
    ema(restoreBytesPerMs_, static_cast<double>(snapshotFileBytes(tag_, n)) / std::max(msSince(start), 1e-3));
    return n;
}

}  // namespace kestrel::runtime
