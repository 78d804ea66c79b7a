// The KV memory of one loaded model, shared by all its sequences.
//
// A KvPool joins the backend's block cache (kv_cache.h), the block bookkeeping
// with its prefix cache (kv_blocks.h) and one BatchRunner that steps any set of
// sequences together. Sessions and the scheduler open sequences here; a new
// request reuses the longest prefix that is either still in its own sequence
// or cached from any other (the system prompt of every chat, an earlier turn,
// a regenerate, an edit of message k). Snapshots move a sequence's tokens and
// KV to disk and back (kv_snapshot.h).
//
// Never stale: the pool belongs to one model file and one KV precision (its
// salt is their fingerprint), and the prefix cache compares token ids exactly,
// so a different template or system prompt is a different prefix.
//
// Ownership: created by Model::load, owned by Model::Impl; keeps the
// LoadedModel alive. Thread-safety: every method locks the pool's mutex; one
// step runs at a time (the backend runs one op at a time), and a sequence
// handle must be used by one caller at a time.
#pragma once

#include "batch_runner.h"
#include "kv_blocks.h"
#include "kv_snapshot.h"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace kestrel::runtime {

struct KvPoolOptions {
    int64_t tokens = 0;           // positions in the pool; must hold at least maxPositions
    KvStorage storage = KvStorage::F16;
    int maxStepTokens = 256;      // tokens per step, all sequences together
    int maxSeqs = 32;             // sequences per step
    int64_t maxPositions = 0;     // longest sequence
    std::string modelPath;        // fingerprinted for the salt and snapshot tags
};

// One sequence's part of a pool step.
struct PoolChunk {
    int32_t seq = -1;
    std::span<const int32_t> tokens;
    model::LogitsWanted logits = model::LogitsWanted::None;
    bool speculative = false;  // model::SeqChunk::speculative
};

struct KvPoolStats {
    KvBlockStats blocks;
    int32_t blockTokens = 0;
    int64_t bytes = 0;            // memory of the whole pool
    int32_t sequences = 0;
};

class KvPool {
public:
    static Result<std::unique_ptr<KvPool>> create(std::shared_ptr<const model::LoadedModel> model,
                                                  backend::Backend& be, const KvPoolOptions& options);
    ~KvPool();

    // An empty sequence; close() releases its blocks (full ones stay cached).
    int32_t open();
    void close(int32_t seq);
    // A new sequence sharing seq's KV (parallel sampling): copy-on-write.
    Result<int32_t> fork(int32_t seq);

    // Prepares seq for a prompt: keeps the longest prefix of `prompt` it holds,
    // or switches to cached blocks when the prefix cache holds a longer one.
    // Reuses at most `limit` positions; returns how many it reuses.
    int64_t reuse(int32_t seq, std::span<const int32_t> prompt, int64_t limit);
    void truncate(int32_t seq, int64_t n);

    // One forward step over chunks of several sequences (each at most once):
    // makes room for their tokens (copy-on-write first), runs the batch,
    // records the tokens. Logits come back per chunk in order (BatchRunner).
    // OutOfMemory when the pool cannot hold them even after evicting every
    // cached block; nothing changes then.
    Status step(std::span<const PoolChunk> chunks, model::StepLogits& logits);
    Status step(std::span<const PoolChunk> chunks, std::vector<float>& logits);  // whole rows

    std::vector<int32_t> tokens(int32_t seq) const;
    int64_t length(int32_t seq) const;
    // Whether a sequence of `tokens` positions could ever fit (admission control).
    bool fits(int64_t tokens) const;
    int64_t maxPositions() const { return runner_->maxPositions(); }
    int maxStepTokens() const { return runner_->maxTokens(); }
    int maxSeqs() const { return runner_->maxSeqs(); }
    int vocabSize() const { return runner_->vocabSize(); }
    KvPoolStats stats() const;
    void clearCache();

    // Snapshots. save() writes seq's tokens and KV under `key`; restore() loads
    // them into seq (emptied first) unless re-prefilling them is estimated to be
    // faster, and returns the positions restored (0: skipped or none). A corrupt
    // or foreign snapshot is removed and reported in `note`, never trusted.
    Status save(int32_t seq, SnapshotStore& store, const std::string& key);
    Result<int64_t> restore(int32_t seq, SnapshotStore& store, const std::string& key, std::string* note = nullptr);
    const SnapshotTag& snapshotTag() const { return tag_; }

private:
    KvPool() = default;
    struct Sequence {
        SeqId blocks = kInvalidSeqId;
        std::vector<int32_t> tokens;
    };
    Sequence* find(int32_t seq);
    const Sequence* find(int32_t seq) const;
    Status reserveLocked(Sequence& s, int64_t newLength);
    double estimatedPrefillMs(int64_t tokens) const;

    mutable std::mutex mutex_;
    std::shared_ptr<const model::LoadedModel> model_;
    backend::Backend* be_ = nullptr;
    std::unique_ptr<KvCache> cache_;
    std::unique_ptr<KvBlockManager> blocks_;
    std::unique_ptr<model::BatchRunner> runner_;
    std::map<int32_t, Sequence> sequences_;
    int32_t nextSeq_ = 1;
    SnapshotTag tag_;
    std::vector<BlockCopy> copies_;
    // Per-step scratch, kept so that a decode step allocates nothing.
    std::vector<Sequence*> stepSeqs_;
    std::vector<model::SeqChunk> stepBatch_;
    // Measured speeds that decide restore vs re-prefill.
    double prefillTokensPerMs_ = 0;   // 0: not measured yet
    double restoreBytesPerMs_ = 0;
};

// The engine's KV layout version, part of every snapshot tag.
const char* kvLayoutVersion();

}  // namespace kestrel::runtime
