// Memory for the weights the CPU backend repacks at load (the lanes layout of
// kernels/cpu/lanes_layout.h), carved from large chunks backed by transparent
// huge pages where the kernel allows them.
//
// Why: decode streams every weight once per token. The model file's mapping
// is often served from huge pages (page cache folios); a repacked copy in
// ordinary 4 KiB pages made the one-token step ~5 % slower on a 2-core Zen 4 VM
// (TLB misses while streaming ~100 MB). One tensor is usually far smaller than
// a 2 MiB page, so tensors share chunks rather than each rounding up to one.
// Thread-safety: none (the backend loads weights one at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace kestrel::backend {

class WeightArena {
public:
    struct Block {
        uint8_t* data = nullptr;          // 64-byte aligned
        std::shared_ptr<void> keepAlive;  // the chunk: freed when its last block's holder is gone
    };
    // nullptr data when the memory cannot be had.
    Block allocate(size_t bytes);

private:
    std::shared_ptr<uint8_t> chunk_;
    size_t used_ = 0, capacity_ = 0;
};

}  // namespace kestrel::backend
