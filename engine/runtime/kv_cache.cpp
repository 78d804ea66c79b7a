#include "kv_cache.h"

#include <cstdlib>
#include <limits>
#include <string>

namespace kestrel::runtime {

Result<std::unique_ptr<ContiguousKvCache>> ContiguousKvCache::create(const KvCacheSpec& spec) {
    if (spec.layers <= 0 || spec.kvHeads <= 0 || spec.headDim <= 0 || spec.capacity <= 0)
        return Status(ErrorCode::InvalidArgument, "KV cache: layers, heads, head size and capacity must be positive");
    const size_t elem = spec.storage == KvStorage::F16 ? 2 : 4;
    const uint64_t row = static_cast<uint64_t>(spec.kvHeads) * static_cast<uint64_t>(spec.headDim);
    const uint64_t limit = std::numeric_limits<size_t>::max() / 4;
    if (static_cast<uint64_t>(spec.capacity) > limit / row / elem / static_cast<uint64_t>(spec.layers) / 2)
        return Status(ErrorCode::OutOfMemory, "KV cache: " + std::to_string(spec.capacity) + " positions do not fit in memory");
    auto cache = std::unique_ptr<ContiguousKvCache>(new ContiguousKvCache());
    cache->spec_ = spec;
    // 64-byte rows start for vector loads; the whole slab is one allocation.
    cache->layerBytes_ = (static_cast<size_t>(spec.capacity) * row * elem + 63) / 64 * 64;
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
    return KvLayer{base, base + layerBytes_, static_cast<int64_t>(spec_.kvHeads) * spec_.headDim};
}

}  // namespace kestrel::runtime
