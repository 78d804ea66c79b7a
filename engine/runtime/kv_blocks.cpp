#include "runtime/kv_blocks.h"

#include <algorithm>
#include <string>

namespace kestrel::runtime {

namespace {

uint64_t mix64(uint64_t x) {  // splitmix64's finaliser: every input bit moves every output bit
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

int64_t blocksFor(int64_t positions, int32_t blockTokens) { return (positions + blockTokens - 1) / blockTokens; }

Status unknownSequence(SeqId seq) {
    return {ErrorCode::InvalidArgument, "KV blocks: no sequence " + std::to_string(seq) + " (released or never created)"};
}

}  // namespace

uint64_t KvBlockManager::defaultBlockHash(uint64_t parent, std::span<const int32_t> tokens) {
    uint64_t h = mix64(parent ^ (0x9e3779b97f4a7c15ULL * (tokens.size() + 1)));
    for (int32_t t : tokens) h = mix64(h + 0x9e3779b97f4a7c15ULL + static_cast<uint32_t>(t));
    return h;
}

KvBlockManager::KvBlockManager(int32_t totalBlocks, int32_t blockTokens, uint64_t salt, BlockHashFn hash)
    : blockTokens_(std::max<int32_t>(blockTokens, 1)), salt_(salt), hash_(hash ? hash : &defaultBlockHash) {
    totalBlocks = std::max<int32_t>(totalBlocks, 0);
    blocks_.resize(static_cast<size_t>(totalBlocks));
    tokens_.resize(static_cast<size_t>(totalBlocks) * static_cast<size_t>(blockTokens_));
    freeList_.reserve(static_cast<size_t>(totalBlocks));
    // Low ids on top of the stack, so a fresh pool hands out 0, 1, 2, ...
    for (BlockId b = totalBlocks - 1; b >= 0; --b) freeList_.push_back(b);
}

KvBlockManager::Sequence* KvBlockManager::find(SeqId seq) {
    auto it = sequences_.find(seq);
    return it == sequences_.end() ? nullptr : &it->second;
}

const KvBlockManager::Sequence* KvBlockManager::find(SeqId seq) const {
    auto it = sequences_.find(seq);
    return it == sequences_.end() ? nullptr : &it->second;
}

std::span<const int32_t> KvBlockManager::registeredTokens(BlockId b) const {
    return {tokens_.data() + static_cast<size_t>(b) * static_cast<size_t>(blockTokens_),
            static_cast<size_t>(blockTokens_)};
}

bool KvBlockManager::serialIsLive(uint64_t hash, uint64_t serial) const {
    auto it = byHash_.find(hash);
    return it != byHash_.end() && blocks_[it->second].serial == serial;
}

void KvBlockManager::lruPushBack(BlockId b) {
    Block& blk = blocks_[b];
    blk.lruPrev = lruTail_;
    blk.lruNext = -1;
    if (lruTail_ >= 0) blocks_[lruTail_].lruNext = b;
    else lruHead_ = b;
    lruTail_ = b;
    ++cachedCount_;
}

void KvBlockManager::lruRemove(BlockId b) {
    Block& blk = blocks_[b];
    if (blk.lruPrev >= 0) blocks_[blk.lruPrev].lruNext = blk.lruNext;
    else lruHead_ = blk.lruNext;
    if (blk.lruNext >= 0) blocks_[blk.lruNext].lruPrev = blk.lruPrev;
    else lruTail_ = blk.lruPrev;
    blk.lruPrev = blk.lruNext = -1;
    --cachedCount_;
}

void KvBlockManager::registerBlock(BlockId b, uint64_t hash, uint64_t parentSerial, std::span<const int32_t> tokens) {
    Block& blk = blocks_[b];
    blk.hash = hash;
    blk.serial = nextSerial_++;
    blk.parentSerial = parentSerial;
    std::copy(tokens.begin(), tokens.end(), tokens_.begin() + static_cast<ptrdiff_t>(b) * blockTokens_);
    byHash_.emplace(hash, b);
}

void KvBlockManager::unregister(BlockId b) {
    byHash_.erase(blocks_[b].hash);
    blocks_[b].serial = 0;
    blocks_[b].parentSerial = 0;
    blocks_[b].hash = 0;
}

BlockId KvBlockManager::takeBlock() {
    BlockId b;
    if (!freeList_.empty()) {
        b = freeList_.back();
        freeList_.pop_back();
    } else {
        b = lruHead_;
        lruRemove(b);
        unregister(b);
        ++evictions_;
    }
    blocks_[b].refCount = 1;
    return b;
}

void KvBlockManager::addRef(BlockId b) {
    if (blocks_[b].refCount++ == 0) lruRemove(b);  // only registered blocks are cached at refcount 0
}

void KvBlockManager::dropRef(BlockId b) {
    if (--blocks_[b].refCount > 0) return;
    if (blocks_[b].serial != 0) lruPushBack(b);
    else freeList_.push_back(b);
}

SeqId KvBlockManager::createSequence() {
    // Ids are not reused until the counter wraps, so a stale id held by a caller
    // finds nothing instead of someone else's sequence.
    while (sequences_.count(nextSeq_) != 0) nextSeq_ = nextSeq_ == INT32_MAX ? 0 : nextSeq_ + 1;
    const SeqId id = nextSeq_;
    nextSeq_ = nextSeq_ == INT32_MAX ? 0 : nextSeq_ + 1;
    sequences_.emplace(id, Sequence{});
    return id;
}

int64_t KvBlockManager::attachPrefix(SeqId seq, std::span<const int32_t> tokens) {
    Sequence* s = find(seq);
    if (!s || s->length != 0 || !s->table.empty()) return 0;
    ++lookups_;
    uint64_t parentHash = salt_, parentSerial = 0;
    const size_t bt = static_cast<size_t>(blockTokens_);
    for (size_t i = 0; (i + 1) * bt <= tokens.size(); ++i) {
        const auto blockTokens = tokens.subspan(i * bt, bt);
        const uint64_t h = hash_(parentHash, blockTokens);
        auto it = byHash_.find(h);
        if (it == byHash_.end()) break;
        const BlockId b = it->second;
        const auto held = registeredTokens(b);
        if (blocks_[b].parentSerial != parentSerial || !std::equal(held.begin(), held.end(), blockTokens.begin()))
            break;  // a collision: another prefix owns this hash
        addRef(b);
        s->table.push_back(b);
        s->chainHash.push_back(h);
        s->chainSerial.push_back(blocks_[b].serial);
        parentHash = h;
        parentSerial = blocks_[b].serial;
    }
    s->length = static_cast<int64_t>(s->table.size()) * blockTokens_;
    hitTokens_ += s->length;
    return s->length;
}

Status KvBlockManager::reserve(SeqId seq, int64_t newLength, std::vector<BlockCopy>& copies) {
    Sequence* s = find(seq);
    if (!s) return unknownSequence(seq);
    if (newLength <= s->length) return Status::ok();
    const int64_t poolPositions = static_cast<int64_t>(blocks_.size()) * blockTokens_;
    if (newLength > poolPositions)  // also keeps the block arithmetic below from overflowing
        return {ErrorCode::OutOfMemory, "KV cache too small: " + std::to_string(newLength) +
                                            " positions do not fit in the whole cache (" + std::to_string(poolPositions) +
                                            "); start a shorter conversation or allow a larger context"};
    const int64_t endBlock = blocksFor(newLength, blockTokens_);
    const int64_t firstWritten = s->length / blockTokens_;
    const int64_t have = static_cast<int64_t>(s->table.size());
    const int64_t appended = std::max<int64_t>(endBlock - have, 0);
    int64_t shared = 0, ownedRegistered = 0;
    for (int64_t i = firstWritten; i < std::min(endBlock, have); ++i) {
        const Block& blk = blocks_[s->table[i]];
        if (blk.refCount > 1) ++shared;
        else if (blk.serial != 0) ++ownedRegistered;
    }
    const int64_t available = availableBlocks();
    const int64_t needed = appended + shared;  // the least that must be found
    if (needed > available) {
        return {ErrorCode::OutOfMemory,
                "KV cache full: sequence " + std::to_string(seq) + " needs " + std::to_string(needed) + " more blocks of " +
                    std::to_string(blockTokens_) + " tokens to hold " + std::to_string(newLength) +
                    " positions, but only " + std::to_string(available) + " of " + std::to_string(blocks_.size()) +
                    " are free or evictable; end another conversation or start a shorter one"};
    }
    // Blocks only this sequence holds are written in place (leaving the prefix
    // cache) when there is no room to copy them: losing a cached prefix beats failing.
    int64_t inPlace = std::max<int64_t>(needed + ownedRegistered - available, 0);

    // Replaced blocks are released only after every allocation, so none of them
    // can be evicted and handed out again while its copy is still pending.
    std::vector<BlockId> replaced;
    for (int64_t i = firstWritten; i < std::min(endBlock, have); ++i) {
        const BlockId old = s->table[i];
        if (writable(old)) continue;
        if (blocks_[old].refCount == 1 && inPlace > 0) {
            unregister(old);
            --inPlace;
            continue;
        }
        const BlockId fresh = takeBlock();
        if (i * blockTokens_ < s->length) {  // holds positions this sequence still reads
            copies.push_back({old, fresh});
            ++copies_;
        }
        s->table[i] = fresh;
        replaced.push_back(old);
    }
    for (int64_t i = have; i < endBlock; ++i) s->table.push_back(takeBlock());
    for (BlockId old : replaced) dropRef(old);
    return Status::ok();
}

void KvBlockManager::commit(SeqId seq, std::span<const int32_t> tokens) {
    Sequence* s = find(seq);
    const auto newLength = static_cast<int64_t>(tokens.size());
    if (!s || newLength <= s->length || blocksFor(newLength, blockTokens_) > static_cast<int64_t>(s->table.size()))
        return;
    for (int64_t i = s->length / blockTokens_; i < blocksFor(newLength, blockTokens_); ++i)
        if (!writable(s->table[i])) return;  // written without reserve(): nothing to trust
    s->length = newLength;

    const size_t bt = static_cast<size_t>(blockTokens_);
    for (size_t i = s->chainHash.size(); i < static_cast<size_t>(newLength / blockTokens_); ++i) {
        const uint64_t parentHash = i == 0 ? salt_ : s->chainHash[i - 1];
        const uint64_t parentSerial = i == 0 ? 0 : s->chainSerial[i - 1];
        const auto blockTokens = tokens.subspan(i * bt, bt);
        const uint64_t h = hash_(parentHash, blockTokens);
        uint64_t serial = 0;
        // A parent whose registration is gone (evicted, or never made after a
        // collision) cannot be matched by a lookup, so its children are not registered.
        const bool parentLive = i == 0 || (parentSerial != 0 && serialIsLive(parentHash, parentSerial));
        if (parentLive) {
            auto it = byHash_.find(h);
            if (it == byHash_.end()) {
                registerBlock(s->table[i], h, parentSerial, blockTokens);
                serial = blocks_[s->table[i]].serial;
            } else {
                const Block& existing = blocks_[it->second];
                const auto held = registeredTokens(it->second);
                if (existing.parentSerial == parentSerial && std::equal(held.begin(), held.end(), blockTokens.begin()))
                    serial = existing.serial;  // the same prefix, computed by another sequence
            }
        }
        s->chainHash.push_back(h);
        s->chainSerial.push_back(serial);
    }
}

void KvBlockManager::truncate(SeqId seq, int64_t n) {
    Sequence* s = find(seq);
    if (!s) return;
    n = std::max<int64_t>(n, 0);
    const auto keep = static_cast<size_t>(blocksFor(n, blockTokens_));
    while (s->table.size() > keep) {
        dropRef(s->table.back());
        s->table.pop_back();
    }
    s->length = std::min(s->length, n);
    const auto full = static_cast<size_t>(s->length / blockTokens_);
    if (s->chainHash.size() > full) {
        s->chainHash.resize(full);
        s->chainSerial.resize(full);
    }
}

SeqId KvBlockManager::fork(SeqId seq) {
    const Sequence* parent = find(seq);
    if (!parent) return kInvalidSeqId;
    Sequence child = *parent;
    child.table.resize(static_cast<size_t>(blocksFor(child.length, blockTokens_)));
    for (BlockId b : child.table) addRef(b);
    const SeqId id = createSequence();
    sequences_[id] = std::move(child);
    return id;
}

void KvBlockManager::release(SeqId seq) {
    auto it = sequences_.find(seq);
    if (it == sequences_.end()) return;
    const auto& table = it->second.table;
    for (auto b = table.rbegin(); b != table.rend(); ++b) dropRef(*b);
    sequences_.erase(it);
}

std::span<const BlockId> KvBlockManager::table(SeqId seq) const {
    const Sequence* s = find(seq);
    return s ? std::span<const BlockId>(s->table) : std::span<const BlockId>();
}

int64_t KvBlockManager::length(SeqId seq) const {
    const Sequence* s = find(seq);
    return s ? s->length : 0;
}

uint64_t KvBlockManager::prefixHash(std::span<const int32_t> tokens) const {
    uint64_t h = salt_;
    const size_t bt = static_cast<size_t>(blockTokens_);
    for (size_t i = 0; (i + 1) * bt <= tokens.size(); ++i) h = hash_(h, tokens.subspan(i * bt, bt));
    return h;
}

KvBlockStats KvBlockManager::stats() const {
    KvBlockStats st;
    st.totalBlocks = totalBlocks();
    st.freeBlocks = static_cast<int32_t>(freeList_.size());
    st.cachedBlocks = cachedCount_;
    st.usedBlocks = st.totalBlocks - st.freeBlocks - st.cachedBlocks;
    // A shared block counts the most positions any holder reads in it.
    std::vector<int32_t> filled(blocks_.size(), 0);
    for (const auto& [id, s] : sequences_)
        for (size_t i = 0; i < s.table.size(); ++i) {
            const int64_t inBlock = std::clamp<int64_t>(s.length - static_cast<int64_t>(i) * blockTokens_, 0, blockTokens_);
            filled[s.table[i]] = std::max(filled[s.table[i]], static_cast<int32_t>(inBlock));
        }
    for (int32_t f : filled) st.liveTokens += f;
    st.lookups = lookups_;
    st.hitTokens = hitTokens_;
    st.evictions = evictions_;
    st.copies = copies_;
    return st;
}

void KvBlockManager::clearCache() {
    while (lruHead_ >= 0) {
        const BlockId b = lruHead_;
        lruRemove(b);
        unregister(b);
        freeList_.push_back(b);
    }
}

Status KvBlockManager::checkInvariants() const {
    auto fail = [](std::string what) { return Status(ErrorCode::Internal, "KV blocks: " + std::move(what)); };
    const auto total = static_cast<int64_t>(blocks_.size());
    auto name = [](int64_t b) { return "block " + std::to_string(b); };

    std::vector<int32_t> refs(blocks_.size(), 0);
    for (const auto& [id, s] : sequences_) {
        const std::string seq = "sequence " + std::to_string(id) + ": ";
        const auto full = static_cast<size_t>(s.length / blockTokens_);
        if (s.length < 0 || static_cast<int64_t>(s.table.size()) < blocksFor(s.length, blockTokens_))
            return fail(seq + "length " + std::to_string(s.length) + " past its " + std::to_string(s.table.size()) + " blocks");
        if (s.chainHash.size() != full || s.chainSerial.size() != full)
            return fail(seq + "chain of " + std::to_string(s.chainHash.size()) + " blocks, " + std::to_string(full) + " are full");
        for (size_t i = 0; i < s.table.size(); ++i) {
            const BlockId b = s.table[i];
            if (b < 0 || b >= total) return fail(seq + "holds " + name(b) + " outside the pool");
            ++refs[b];
            const Block& blk = blocks_[b];
            if (i >= full || blk.serial == 0) continue;
            if (blk.hash != s.chainHash[i] || blk.serial != s.chainSerial[i])
                return fail(seq + "full " + name(b) + " is registered under another chain");
            if (blk.parentSerial != (i == 0 ? 0 : s.chainSerial[i - 1]))
                return fail(seq + "registered " + name(b) + " names another parent");
        }
    }

    enum : uint8_t { kNowhere, kFree, kCached };
    std::vector<uint8_t> where(blocks_.size(), kNowhere);
    for (BlockId b : freeList_) {
        if (b < 0 || b >= total) return fail("free list holds " + name(b) + " outside the pool");
        if (where[b] != kNowhere) return fail(name(b) + " is on the free list twice");
        where[b] = kFree;
    }
    int64_t lruCount = 0;
    for (BlockId b = lruHead_, prev = -1; b >= 0; prev = b, b = blocks_[b].lruNext) {
        if (b >= total) return fail("LRU list holds " + name(b) + " outside the pool");
        if (where[b] != kNowhere) return fail(name(b) + " is cached and " + (where[b] == kFree ? "free" : "cached twice"));
        if (blocks_[b].lruPrev != prev) return fail(name(b) + " has a broken LRU back link");
        where[b] = kCached;
        if (++lruCount > total) return fail("LRU list has a cycle");
        if (blocks_[b].lruNext < 0 && b != lruTail_) return fail("LRU tail is not the last block");
    }
    if (lruHead_ < 0 && lruTail_ >= 0) return fail("LRU list has a tail but no head");

    int64_t registered = 0;
    for (int64_t b = 0; b < total; ++b) {
        const Block& blk = blocks_[b];
        if (blk.refCount != refs[b])
            return fail(name(b) + " has refcount " + std::to_string(blk.refCount) + " but " + std::to_string(refs[b]) + " tables hold it");
        const bool referenced = blk.refCount > 0;
        if (referenced + (where[b] == kFree) + (where[b] == kCached) != 1)
            return fail(name(b) + " is not in exactly one of free / cached / referenced");
        if (where[b] == kFree && blk.serial != 0) return fail("free " + name(b) + " is still registered");
        if (where[b] == kCached && blk.serial == 0) return fail("cached " + name(b) + " is not registered");
        if (blk.serial == 0) continue;
        ++registered;
        auto it = byHash_.find(blk.hash);
        if (it == byHash_.end() || it->second != b) return fail("registered " + name(b) + " is not in the hash map");
        if (blk.serial >= nextSerial_) return fail(name(b) + " has a serial from the future");
    }
    if (static_cast<int64_t>(byHash_.size()) != registered)
        return fail(std::to_string(byHash_.size()) + " hash entries for " + std::to_string(registered) + " registered blocks");
    for (const auto& [h, b] : byHash_)
        if (b < 0 || b >= total || blocks_[b].serial == 0 || blocks_[b].hash != h)
            return fail("a hash entry points at " + name(b) + ", which is not registered under it");

    const KvBlockStats st = stats();
    int64_t used = 0;
    for (int64_t b = 0; b < total; ++b) used += blocks_[b].refCount > 0;
    if (cachedCount_ != lruCount || st.cachedBlocks != lruCount || st.usedBlocks != used ||
        st.freeBlocks + st.cachedBlocks + st.usedBlocks != st.totalBlocks)
        return fail("counts (free " + std::to_string(st.freeBlocks) + ", cached " + std::to_string(st.cachedBlocks) +
                    ", used " + std::to_string(st.usedBlocks) + ") differ from a recount (cached " +
                    std::to_string(lruCount) + ", used " + std::to_string(used) + ")");
    if (st.liveTokens > used * blockTokens_) return fail("more live tokens than used blocks can hold");
    return Status::ok();
}

}  // namespace kestrel::runtime
