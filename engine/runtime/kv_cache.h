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
// Q8 (the CPU backend): int8 codes with one f32 scale per 32 values of a head's
// row (GGUF's Q8_0 with a float scale), 1.125 bytes per value: 1.8x the context
// in the same memory, for a rounding error of <= 1/254 of a block's largest
// value. Decode attention reads every K and V row of the context per token;
// measured with SmolLM2 at 4096 positions on two threads it took 127 us per
// layer against 146 for F16 (docs/PERFORMANCE.md): less than the bytes suggest,
// as the per-key arithmetic, not DRAM, bounds it there. A slab holds the codes
// of all positions first, then their scales (one float per 32 codes, at code
// offset / 32), so element offsets are the same arithmetic for every storage type.
//
// Ownership: the backend that created a cache owns its memory placement (each
// cache says its device). Thread-safety: none; the caller serialises steps.
#pragma once

#include "kestrel/status.h"

#include <cstdint>
#include <memory>
#include <span>
#include <utility>

namespace kestrel::runtime {

enum class KvStorage { F32, F16, Q8 };

// Values per scale of the Q8 storage.
constexpr int kKvQ8Block = 32;

// Bytes of one position's K (or V) row of kvHeads heads of headDim values,
// codes and scales together (Q8 needs headDim % kKvQ8Block == 0).
constexpr size_t kvRowBytes(KvStorage storage, int64_t kvHeads, int64_t headDim) {
    const auto values = static_cast<size_t>(kvHeads) * static_cast<size_t>(headDim);
    switch (storage) {
        case KvStorage::F32: return values * 4;
        case KvStorage::F16: return values * 2;
        case KvStorage::Q8: return values + values / kKvQ8Block * sizeof(float);
    }
    return 0;
}

constexpr int32_t kDefaultKvBlockTokens = 16;

struct KvCacheSpec {
    int layers = 0;
    int kvHeads = 0;
    int headDim = 0;         // of K and V (the four supported architectures use one size)
    int64_t capacity = 0;    // positions in all blocks together (rounded up to whole blocks)
    KvStorage storage = KvStorage::F16;
    int32_t blockTokens = kDefaultKvBlockTokens;

    int64_t blocks() const { return (capacity + blockTokens - 1) / blockTokens; }
    // Bytes of one value's code (the Q8 scales come on top: rowBytes() counts them).
    size_t elementBytes() const { return storage == KvStorage::F32 ? 4 : storage == KvStorage::F16 ? 2 : 1; }
    size_t codeRowBytes() const { return static_cast<size_t>(kvHeads) * static_cast<size_t>(headDim) * elementBytes(); }
    size_t rowBytes() const { return kvRowBytes(storage, kvHeads, headDim); }
    size_t scaleRowBytes() const { return rowBytes() - codeRowBytes(); }
    // Where a slab's scales start: after the codes of every position.
    size_t scaleOffset() const { return static_cast<size_t>(blocks() * blockTokens) * codeRowBytes(); }
    // K and V of every layer for one position.
    size_t bytesPerToken() const { return rowBytes() * 2 * static_cast<size_t>(layers); }
};

// One layer's slabs (layout above).
struct KvLayer {
    void* k = nullptr;
    void* v = nullptr;
    int64_t rowStride = 0;
    int32_t blockTokens = 0;
    float* kScales = nullptr;  // Q8 only: the scale of code e is kScales[e / kKvQ8Block]
    float* vScales = nullptr;
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
// rows, then V rows, each as codes and then, for Q8, scales): for each run,
// fn(layer, isValue, byteOffsetInSlab, byteOffsetInPayload, bytes). Backends
// implement readKv/writeKv with it.
template <typename Fn>
void forEachKvRun(const KvCacheSpec& spec, const int32_t* table, int64_t tokens, Fn&& fn) {
    const size_t payloadSlab = static_cast<size_t>(tokens) * spec.rowBytes();  // one K (or V) of one layer
    for (int layer = 0; layer < spec.layers; ++layer)
        for (int isValue = 0; isValue < 2; ++isValue) {
            size_t payload = (static_cast<size_t>(layer) * 2 + static_cast<size_t>(isValue)) * payloadSlab;
            for (const auto& [slabBase, row] : {std::pair{size_t(0), spec.codeRowBytes()},
                                               std::pair{spec.scaleOffset(), spec.scaleRowBytes()}}) {
                if (row == 0) continue;
                for (int64_t p = 0; p < tokens; p += spec.blockTokens) {
                    const int64_t n = tokens - p < spec.blockTokens ? tokens - p : spec.blockTokens;
                    const size_t src = slabBase + static_cast<size_t>(table[p / spec.blockTokens]) * spec.blockTokens * row;
                    fn(layer, isValue != 0, src, payload + static_cast<size_t>(p) * row, static_cast<size_t>(n) * row);
                }
                payload += static_cast<size_t>(tokens) * row;
            }
        }
}

// The byte ranges that copying every layer's K and V of block src into block
// dst takes: fn(layer, isValue, srcOffsetInSlab, dstOffsetInSlab, bytes).
// Backends implement copyKvBlock with it.
template <typename Fn>
void forEachKvBlockCopy(const KvCacheSpec& spec, int32_t srcBlock, int32_t dstBlock, Fn&& fn) {
    for (int layer = 0; layer < spec.layers; ++layer)
        for (int isValue = 0; isValue < 2; ++isValue)
            for (const auto& [slabBase, row] : {std::pair{size_t(0), spec.codeRowBytes()},
                                               std::pair{spec.scaleOffset(), spec.scaleRowBytes()}}) {
                if (row == 0) continue;
                const size_t blockBytes = row * static_cast<size_t>(spec.blockTokens);
                fn(layer, isValue != 0, slabBase + static_cast<size_t>(srcBlock) * blockBytes,
                   slabBase + static_cast<size_t>(dstBlock) * blockBytes, blockBytes);
            }
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
