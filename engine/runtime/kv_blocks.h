// Paged KV bookkeeping: which sequence holds which block of the shared KV pool,
// which full blocks hold a reusable prompt prefix, and which blocks must be
// copied before a write (copy-on-write after fork or a prefix hit).
//
// Pure host logic. KvBlockManager hands out block ids and BlockCopy orders; the
// caller owns the memory (runtime/kv_cache.h), performs every BlockCopy (each
// layer's K and V of block src into dst), in order, before it writes any position
// or calls reserve() again, and passes each sequence's table() to attention.
//
// Prefix cache. A full block is named by a hash chain h_i = H(h_{i-1}, tokens of
// block i) with h_-1 = salt, the fingerprint of the (model, KV precision) this
// manager serves, so blocks of another model or precision never match. A match
// is never trusted to the hash: every registered block keeps its tokens and the
// registration serial of its parent, and a lookup compares both exactly, so a
// collision (even one on a parent that was evicted and replaced) can only cost a
// miss, never serve wrong KV. Released blocks that hold a registered prefix stay
// cached (evictable, least recently released first) until a reserve() needs
// their memory; a sequence's blocks are released tail first, so a chain's
// children are evicted before their parents and chains stay prefix-closed.
//
// Block size: the engine uses 16 tokens (kDefaultKvBlockTokens). A prefix hit
// loses at most 15 tokens of recompute; a sequence wastes 8 positions on
// average, which keeps live-token occupancy above 95 % for sequences of >= 160
// tokens; and 16 rows of (kv heads x head dim) halves are >= 6 KB contiguous per
// layer for every supported model (SmolLM2-135M, the smallest: 3 x 64 halves x 16
// = 6 KB), large enough for full-speed DRAM and HBM bursts. The manager itself
// takes blockTokens as a parameter (tests use small blocks).
//
// Cost: every call is O(blocks it touches) (hash map, free stack, intrusive LRU
// list), except stats(), which walks the sequence tables for liveTokens, and
// checkInvariants(), which recounts everything.
//
// Unknown SeqIds are caller bugs; calls on them change nothing and return an
// InvalidArgument Status, an empty table, 0 or kInvalidSeqId. Thread-safety:
// none; the caller holds a mutex around every call.
#pragma once

#include "kestrel/status.h"

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace kestrel::runtime {

using BlockId = int32_t;
using SeqId = int32_t;

constexpr SeqId kInvalidSeqId = -1;

struct BlockCopy {
    BlockId src, dst;  // the caller copies every layer's K and V of block src into dst
};

struct KvBlockStats {
    int32_t totalBlocks = 0;
    int32_t freeBlocks = 0;    // holding nothing
    int32_t cachedBlocks = 0;  // refcount 0 but holding a registered prefix (evictable)
    int32_t usedBlocks = 0;    // refcount > 0
    int64_t liveTokens = 0;    // positions filled in referenced blocks, each block counted once
    int64_t lookups = 0;       // attachPrefix calls
    int64_t hitTokens = 0;     // tokens they covered
    int64_t evictions = 0;     // cached blocks reused for new data
    int64_t copies = 0;        // BlockCopy orders issued
};

// The hash of one block given its parent's hash. Injectable so tests can force
// collisions; the default is KvBlockManager::defaultBlockHash.
using BlockHashFn = uint64_t (*)(uint64_t parent, std::span<const int32_t> tokens);

class KvBlockManager {
public:
    // totalBlocks < 0 is treated as 0 and blockTokens < 1 as 1 (caller bugs).
    KvBlockManager(int32_t totalBlocks, int32_t blockTokens, uint64_t salt, BlockHashFn hash = nullptr);

    static uint64_t defaultBlockHash(uint64_t parent, std::span<const int32_t> tokens);

    int32_t blockTokens() const { return blockTokens_; }
    int32_t totalBlocks() const { return static_cast<int32_t>(blocks_.size()); }

    SeqId createSequence();
    bool hasSequence(SeqId seq) const { return sequences_.count(seq) != 0; }

    // For an empty sequence (no positions, no blocks): attaches the longest chain
    // of cached full blocks matching a prefix of `tokens` and returns the tokens
    // it covers (a multiple of blockTokens, at most tokens.size()); the sequence's
    // length becomes that. A caller that needs the logits of the last prompt token
    // passes the prompt without it. Returns 0 for a non-empty or unknown sequence.
    int64_t attachPrefix(SeqId seq, std::span<const int32_t> tokens);

    // Makes room for `newLength` positions: appends blocks (free ones first, then
    // the least recently released cached ones) and makes every block that
    // positions [length, newLength) fall in writable (refcount 1, not registered).
    // A block that is not is replaced by a fresh one, with a BlockCopy appended to
    // `copies` when it holds positions < length (a block holding none is replaced
    // without a copy). Exception: when memory is short, a block that only this
    // sequence holds is dropped from the prefix cache and written in place instead
    // of being copied. Fails with OutOfMemory, changing nothing, when the blocks
    // cannot be found. newLength <= length is a no-op.
    Status reserve(SeqId seq, int64_t newLength, std::vector<BlockCopy>& copies);

    // The caller has written positions [length(seq), tokens.size()) of the
    // sequence; `tokens` is its whole token list. Sets the length and registers
    // every block that is now full. Where an identical chain block is already
    // registered (another sequence computed the same prefix), that registration is
    // kept and this block stays private. Ignored (a caller bug) when tokens.size()
    // is not above length(seq) or the positions were not reserve()d.
    void commit(SeqId seq, std::span<const int32_t> tokens);

    // Forgets positions >= n: blocks wholly past n are released (reserved ones
    // too); a partly kept block stays and is copied on the next write if it is
    // shared or registered.
    void truncate(SeqId seq, int64_t n);

    // A new sequence sharing the blocks that hold seq's positions (refcount + 1
    // each; a reserved block past the length is not shared). Writes to shared
    // blocks copy first (see reserve). kInvalidSeqId for an unknown sequence.
    SeqId fork(SeqId seq);

    // Drops the sequence: refcount - 1 on each block, tail first; blocks reaching
    // 0 become cached (registered ones, most recently used) or free.
    void release(SeqId seq);

    // Block ids for positions 0, blockTokens, 2 blockTokens, ... (may extend past
    // the length when reserved). Valid until the next non-const call.
    std::span<const BlockId> table(SeqId seq) const;
    int64_t length(SeqId seq) const;
    // How many sequence tables hold block b (0 for an id outside the pool).
    int32_t refCount(BlockId b) const { return b >= 0 && b < totalBlocks() ? blocks_[b].refCount : 0; }

    // How many more blocks could be obtained right now (free + evictable).
    int32_t availableBlocks() const { return static_cast<int32_t>(freeList_.size()) + cachedCount_; }

    // The chain hash of the full blocks of `tokens` (the salt when there is none):
    // the name a prefix has in this manager's cache.
    uint64_t prefixHash(std::span<const int32_t> tokens) const;

    KvBlockStats stats() const;

    // Drops every cached (refcount 0) block from the prefix cache; blocks that
    // sequences hold keep their registration.
    void clearCache();

    // For tests: every block is in exactly one of free / cached LRU / referenced;
    // refcounts equal the number of tables holding each block; hash map entries
    // and registered blocks point at each other; sequences' chains agree with the
    // blocks they hold; counters match a recount. Names the first violation.
    Status checkInvariants() const;

private:
    struct Block {
        int32_t refCount = 0;
        BlockId lruPrev = -1, lruNext = -1;  // cached blocks only; head is the least recently released
        uint64_t hash = 0;                   // registered blocks only
        uint64_t serial = 0;                 // registration serial; 0: not registered
        uint64_t parentSerial = 0;           // serial of the parent's registration; 0: first block
    };
    struct Sequence {
        std::vector<BlockId> table;
        int64_t length = 0;
        // Per full block: its chain hash and the serial of the registration holding
        // that exact prefix (this block's or an identical one's); 0 when none is
        // known (a collision), which stops registration of the blocks after it.
        std::vector<uint64_t> chainHash;
        std::vector<uint64_t> chainSerial;
    };

    Sequence* find(SeqId seq);
    const Sequence* find(SeqId seq) const;
    std::span<const int32_t> registeredTokens(BlockId b) const;
    bool writable(BlockId b) const { return blocks_[b].refCount == 1 && blocks_[b].serial == 0; }
    bool serialIsLive(uint64_t hash, uint64_t serial) const;
    BlockId takeBlock();             // refcount 1; availableBlocks() must be > 0
    void addRef(BlockId b);
    void dropRef(BlockId b);
    void registerBlock(BlockId b, uint64_t hash, uint64_t parentSerial, std::span<const int32_t> tokens);
    void unregister(BlockId b);
    void lruPushBack(BlockId b);
    void lruRemove(BlockId b);

    int32_t blockTokens_;
    uint64_t salt_;
    BlockHashFn hash_;
    std::vector<Block> blocks_;
    std::vector<int32_t> tokens_;    // blockTokens_ per block: what a registered block holds
    std::vector<BlockId> freeList_;  // a stack
    BlockId lruHead_ = -1, lruTail_ = -1;
    int32_t cachedCount_ = 0;
    std::unordered_map<uint64_t, BlockId> byHash_;
    std::unordered_map<SeqId, Sequence> sequences_;
    SeqId nextSeq_ = 0;
    uint64_t nextSerial_ = 1;
    int64_t lookups_ = 0, hitTokens_ = 0, evictions_ = 0, copies_ = 0;
};

}  // namespace kestrel::runtime
