#include "weight_arena.h"

#include <algorithm>
#include <cstdlib>
#include <sys/mman.h>

namespace kestrel::backend {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kChunk = size_t{64} << 20;  // virtual: untouched tail pages never become resident

}  // namespace

WeightArena::Block WeightArena::allocate(size_t bytes) {
    bytes = (bytes + 63) / 64 * 64;
    if (!chunk_ || capacity_ - used_ < bytes) {
        const size_t capacity = std::max(kChunk, (bytes + kHugePage - 1) / kHugePage * kHugePage);
        auto* p = static_cast<uint8_t*>(std::aligned_alloc(kHugePage, capacity));
        if (!p) return {};
#ifdef MADV_HUGEPAGE
        madvise(p, capacity, MADV_HUGEPAGE);  // advice only: without THP the memory works the same
#endif
        chunk_ = std::shared_ptr<uint8_t>(p, [](uint8_t* q) { std::free(q); });
        used_ = 0;
        capacity_ = capacity;
    }
    Block b{chunk_.get() + used_, chunk_};
    used_ += bytes;
    return b;
}

}  // namespace kestrel::backend
