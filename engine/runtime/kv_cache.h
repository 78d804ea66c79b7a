// The keys and values of one sequence, per layer, as attention reads them.
//
// KvCache is the interface a backend's attention consumes; ContiguousKvCache
// is the first implementation (one slab per layer, position-major), and a
// paged cache with shared prefix blocks can replace it behind the same calls.
// The cache records how many positions hold valid entries (length); the model
// runner advances it after each step and truncates it to rewind a sequence.
//
// Storage type: F16 by default. It halves the memory of a long context (SmolLM2
// at 8k tokens: 188 MiB instead of 377 MiB) for a relative rounding error of
// 2^-11 per element, which moves the logits far less than the int8 activation
// quantisation the matmuls already apply (see tests/engine/model). F32 is kept
// for tests and for hardware without fast half conversion.
//
// Ownership: the backend that created a cache owns its memory placement (each
// cache says its device); the model runner owns the cache object.
// Thread-safety: none; one sequence is stepped by one thread at a time.
#pragma once

#include "kestrel/status.h"

#include <cstdint>
#include <memory>

namespace kestrel::runtime {

enum class KvStorage { F32, F16 };

struct KvCacheSpec {
    int layers = 0;
    int kvHeads = 0;
    int headDim = 0;         // of K and V (the four supported architectures use one size)
    int64_t capacity = 0;    // positions
    KvStorage storage = KvStorage::F16;
};

// One layer's slabs: position p of kv head h starts at element p * rowStride + h * headDim.
struct KvLayer {
    void* k = nullptr;
    void* v = nullptr;
    int64_t rowStride = 0;
};

class KvCache {
public:
    virtual ~KvCache() = default;

    virtual const KvCacheSpec& spec() const = 0;
    int64_t capacity() const { return spec().capacity; }
    virtual int device() const = 0;  // -1: host memory

    // Positions [0, length) are valid.
    virtual int64_t length() const = 0;
    virtual void setLength(int64_t n) = 0;  // the runner calls it after storing positions < n
    void truncate(int64_t n) {
        if (n < length()) setLength(n < 0 ? 0 : n);
    }

    virtual KvLayer layer(int index) = 0;
    virtual size_t bytes() const = 0;
};

// Host memory, one K and one V slab per layer, allocated once at creation.
class ContiguousKvCache final : public KvCache {
public:
    static Result<std::unique_ptr<ContiguousKvCache>> create(const KvCacheSpec& spec);
    ~ContiguousKvCache() override;

    const KvCacheSpec& spec() const override { return spec_; }
    int device() const override { return -1; }
    int64_t length() const override { return length_; }
    void setLength(int64_t n) override { length_ = n; }
    KvLayer layer(int index) override;
    size_t bytes() const override { return bytes_; }

private:
    ContiguousKvCache() = default;
    KvCacheSpec spec_;
    int64_t length_ = 0;
    size_t bytes_ = 0;
    size_t layerBytes_ = 0;  // of one K (or V) slab
    void* memory_ = nullptr;
};

}  // namespace kestrel::runtime
