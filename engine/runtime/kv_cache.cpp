#include "kv_cache.h"

#include <cstdlib>
#include <limits>
#include <string>

namespace kestrel::runtime {

Status validateKvSpec(const KvCacheSpec& spec) {
    if (spec.layers <= 0 || spec.kvHeads <= 0 || spec.headDim <= 0 || spec.capacity <= 0 || spec.blockTokens <= 0)
        return Status(ErrorCode::InvalidArgument,
                      "KV cache: layers, heads, head size, capacity and block size must be positive");
    if (spec.storage == KvStorage::Q8 && spec.headDim % kKvQ8Block != 0)
        return Status(ErrorCode::Unsupported, "KV cache: 8-bit storage needs a head size that is a multiple of " +
                                                  std::to_string(kKvQ8Block) + ", the model's is " +
                                                  std::to_string(spec.headDim));
    const uint64_t limit = std::numeric_limits<size_t>::max() / 4;
    if (static_cast<uint64_t>(spec.blocks()) * static_cast<uint64_t>(spec.blockTokens) >
        limit / spec.rowBytes() / static_cast<uint64_t>(spec.layers) / 2)
        return Status(ErrorCode::OutOfMemory, "KV cache: " + std::to_string(spec.capacity) + " positions do not fit in memory");
    return Status::ok();
}

Status validateKvTransfer(const KvCacheSpec& spec, std::span<const int32_t> table, int64_t tokens, size_t bufferBytes) {
    if (tokens < 0 || (tokens + spec.blockTokens - 1) / spec.blockTokens > static_cast<int64_t>(table.size()))
        return Status(ErrorCode::InvalidArgument, "KV transfer: the block table does not cover the positions");
    for (int32_t b : table)
        if (b < 0 || b >= spec.blocks()) return Status(ErrorCode::InvalidArgument, "KV transfer: block id out of range");
    if (bufferBytes != static_cast<size_t>(tokens) * spec.bytesPerToken())
        return Status(ErrorCode::InvalidArgument, "KV transfer: the buffer holds " + std::to_string(bufferBytes) +
                                                      " bytes, " + std::to_string(tokens) + " positions need " +
                                                      std::to_string(static_cast<size_t>(tokens) * spec.bytesPerToken()));
    return Status::ok();
}

Status validateKvBlockCopy(const KvCacheSpec& spec, int32_t srcBlock, int32_t dstBlock) {
    if (srcBlock < 0 || dstBlock < 0 || srcBlock >= spec.blocks() || dstBlock >= spec.blocks())
        return Status(ErrorCode::InvalidArgument, "KV block copy: block id out of range");
    return Status::ok();
}

Result<std::unique_ptr<ContiguousKvCache>> ContiguousKvCache::create(const KvCacheSpec& spec) {
    KESTREL_RETURN_IF_ERROR(validateKvSpec(spec));
    auto cache = std::unique_ptr<ContiguousKvCache>(new ContiguousKvCache());
    cache->spec_ = spec;
    cache->spec_.capacity = spec.blocks() * spec.blockTokens;
    // 64-byte rows start for vector loads; the whole slab is one allocation.
    cache->layerBytes_ = (static_cast<size_t>(cache->spec_.capacity) * spec.rowBytes() + 63) / 64 * 64;
    cache->bytes_ = cache->layerBytes_ * 2 * static_cast<size_t>(spec.layers);
    // Untouched pages stay unmapped, so a long context costs memory only as it fills.
    cache->memory_ = std::aligned_alloc(64, cache->bytes_);
    if (!cache->memory_)
        return Status(ErrorCode::OutOfMemory, "KV cache: cannot allocate " + std::to_string(cache->bytes_ >> 20) + " MiB");
    return cache;
}

ContiguousKvCache::~ContiguousKvCache() { std::free(memory_); }

KvLayer ContiguousKvCache::layer(int index) {
    auto* base = static_cast<uint8_t*>(memory_) + static_cast<size_t>(index) * 2 * layerBytes_;
    KvLayer l{base, base + layerBytes_, static_cast<int64_t>(spec_.kvHeads) * spec_.headDim, spec_.blockTokens};
    if (spec_.storage == KvStorage::Q8) {
        l.kScales = reinterpret_cast<float*>(base + spec_.scaleOffset());
        l.vScales = reinterpret_cast<float*>(base + layerBytes_ + spec_.scaleOffset());
    }
    return l;
}

}  // namespace kestrel::runtime
