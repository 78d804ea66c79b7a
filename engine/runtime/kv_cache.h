// The KV memory of a model: a pool of fixed-size blocks, per layer, as attention reads them.
//
// KvCache is the memory; which sequence owns which block is bookkeeping above it
// (runtime/kv_blocks.h for the shared pool, or an identity table for a private
// one). A step tells the backend, per token, its position and its sequence's
// block table (backend::KvBatch), so attention on every backend reads through
// the same indirection and sequences can share prefix blocks.
//
// Layout: per layer one K and one V slab of `blocks` blocks; physical block b,
// offset o < blockTokens, kv head h starts at element
// (b * blockTokens + o) * rowStride + h * headDim.
//
// Block size: 16 positions by default. A prefix hit loses at most 15 tokens of
// recompute; a sequence wastes 8 positions on average, so blocks stay >= 95 %
// full for sequences of >= 160 tokens; and 16 rows of kvHeads x headDim halves
// are >= 6 KB contiguous per layer for every supported model, large enough for
// full-speed DRAM and HBM bursts.
//
// Storage type: F16 by default. It halves the memory of a long context (SmolLM2
// at 8k tokens: 188 MiB instead of 377 MiB) for a relative rounding error of
// 2^-11 per element, which moves the logits far less than the int8 activation
// quantisation the matmuls already apply (see tests/engine/model). F32 is kept
// for tests and for hardware without fast half conversion.
//
// Ownership: the backend that created a cache owns its memory placement (each
// cache says its device). Thread-safety: none; the caller serialises steps.
#pragma once

#include "kestrel/status.h"

#include <cstdint>
#include <memory>
#include <span>

namespace kestrel::runtime {

enum class KvStorage { F32, F16 };

constexpr int32_t kDefaultKvBlockTokens = 16;

struct KvCacheSpec {
    int layers = 0;
    int kvHeads = 0;
    int headDim = 0;         // of K and V (the four supported architectures use one size)
    int64_t capacity = 0;    // positions in all blocks together (rounded up to whole blocks)
    KvStorage storage = KvStorage::F16;
    int32_t blockTokens = kDefaultKvBlockTokens;

    int64_t blocks() const { return (capacity + blockTokens - 1) / blockTokens; }
    size_t elementBytes() const { return storage == KvStorage::F16 ? 2 : 4; }
    size_t rowBytes() const { return static_cast<size_t>(kvHeads) * static_cast<size_t>(headDim) * elementBytes(); }
    // K and V of every layer for one position.
    size_t bytesPerToken() const { return rowBytes() * 2 * static_cast<size_t>(layers); }
};

// One layer's slabs (layout above).
struct KvLayer {
    void* k = nullptr;
    void* v = nullptr;
    int64_t rowStride = 0;
    int32_t blockTokens = 0;
};

class KvCache {
public:
    virtual ~KvCache() = default;

    virtual const KvCacheSpec& spec() const = 0;
    int64_t capacity() const { return spec().capacity; }
    virtual int device() const = 0;  // -1: host memory

    virtual KvLayer layer(int index) = 0;
    virtual size_t bytes() const = 0;
};

// The contiguous runs that copying positions [0, tokens) of a sequence with
// block table `table` to or from a snapshot payload takes (layer by layer: K
// rows, then V rows): for each run, fn(layer, isValue, byteOffsetInSlab,
// byteOffsetInPayload, bytes). Backends implement readKv/writeKv with it.
template <typename Fn>
void forEachKvRun(const KvCacheSpec& spec, const int32_t* table, int64_t tokens, Fn&& fn) {
    const size_t row = spec.rowBytes();
    const size_t slab = static_cast<size_t>(tokens) * row;  // payload bytes of one K (or V) of one layer
    for (int layer = 0; layer < spec.layers; ++layer)
        for (int isValue = 0; isValue < 2; ++isValue) {
            const size_t payloadBase = (static_cast<size_t>(layer) * 2 + static_cast<size_t>(isValue)) * slab;
            for (int64_t p = 0; p < tokens; p += spec.blockTokens) {
                const int64_t n = tokens - p < spec.blockTokens ? tokens - p : spec.blockTokens;
                const size_t src = static_cast<size_t>(table[p / spec.blockTokens]) * spec.blockTokens * row;
                fn(layer, isValue != 0, src, payloadBase + static_cast<size_t>(p) * row, static_cast<size_t>(n) * row);
            }
        }
}

// The byte ranges that copying every layer's K and V of block src into block
// dst takes: fn(layer, isValue, srcOffsetInSlab, dstOffsetInSlab, bytes).
// Backends implement copyKvBlock with it.
template <typename Fn>
void forEachKvBlockCopy(const KvCacheSpec& spec, int32_t srcBlock, int32_t dstBlock, Fn&& fn) {
    const size_t blockBytes = spec.rowBytes() * static_cast<size_t>(spec.blockTokens);
    for (int layer = 0; layer < spec.layers; ++layer)
        for (int isValue = 0; isValue < 2; ++isValue)
            fn(layer, isValue != 0, static_cast<size_t>(srcBlock) * blockBytes, static_cast<size_t>(dstBlock) * blockBytes,
               blockBytes);
}

// Checks a transfer before any byte moves: the table covers [0, tokens), its
// ids are inside the cache, and the buffer has exactly tokens * bytesPerToken().
Status validateKvTransfer(const KvCacheSpec& spec, std::span<const int32_t> table, int64_t tokens, size_t bufferBytes);
Status validateKvBlockCopy(const KvCacheSpec& spec, int32_t srcBlock, int32_t dstBlock);

// Checks the sizes and that the whole cache is addressable.
Status validateKvSpec(const KvCacheSpec& spec);

// Host memory, one K and one V slab per layer, allocated once at creation
// (pages are committed as blocks are first written).
class ContiguousKvCache final : public KvCache {
public:
    static Result<std::unique_ptr<ContiguousKvCache>> create(const KvCacheSpec& spec);
    ~ContiguousKvCache() override;

    const KvCacheSpec& spec() const override { return spec_; }
    int device() const override { return -1; }
    KvLayer layer(int index) override;
    size_t bytes() const override { return bytes_; }

private:
    ContiguousKvCache() = default;
    KvCacheSpec spec_;
    size_t bytes_ = 0;
    size_t layerBytes_ = 0;  // of one K (or V) slab
    void* memory_ = nullptr;
};

}  // namespace kestrel::runtime
