// CudaBackend: KV block copies (copy-on-write) and transfers to and from the
// host (snapshots). Each runs after the work recorded before it, in stream order.
#include "cuda_backend_impl.h"

#include <cstring>

namespace kestrel::backend::cudaimpl {

uint64_t CudaBackend::availableMemoryBytes() const {
    cudaSetDevice(device_);
    size_t freeB = 0, totalB = 0;
    if (cudaMemGetInfo(&freeB, &totalB) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return freeB;
}

Status CudaBackend::copyKvBlock(runtime::KvCache& kv, int32_t srcBlock, int32_t dstBlock) {
    const auto& spec = kv.spec();
    KESTREL_RETURN_IF_ERROR(runtime::validateKvBlockCopy(spec, srcBlock, dstBlock));
    KESTREL_RETURN_IF_ERROR(flush());
    cudaSetDevice(device_);
    Status st;
    runtime::forEachKvBlockCopy(spec, srcBlock, dstBlock, [&](int layer, bool isV, size_t src, size_t dst, size_t n) {
        if (!st.isOk()) return;
        const runtime::KvLayer l = kv.layer(layer);
        auto* base = static_cast<uint8_t*>(isV ? l.v : l.k);
        st = check(cudaMemcpyAsync(base + dst, base + src, n, cudaMemcpyDeviceToDevice, stream_), "copying a KV block");
    });
    KESTREL_RETURN_IF_ERROR(st);
    inFlight_ = true;
    return Status::ok();
}

namespace {

// Pinned staging for one transfer (page-locked memory makes the many small
// block copies asynchronous, so they overlap).
struct PinnedBuffer {
    void* p = nullptr;
    ~PinnedBuffer() { cudaFreeHost(p); }
};

}  // namespace

Status CudaBackend::readKv(runtime::KvCache& kv, std::span<const int32_t> table, int64_t tokens,
                           std::span<uint8_t> out) {
    KESTREL_RETURN_IF_ERROR(runtime::validateKvTransfer(kv.spec(), table, tokens, out.size()));
    KESTREL_RETURN_IF_ERROR(flush());
    cudaSetDevice(device_);
    PinnedBuffer staging;
    KESTREL_RETURN_IF_ERROR(check(cudaMallocHost(&staging.p, out.size() ? out.size() : 1), "allocating pinned host memory"));
    auto* host = static_cast<uint8_t*>(staging.p);
    Status st;
    runtime::forEachKvRun(kv.spec(), table.data(), tokens, [&](int layer, bool isV, size_t src, size_t dst, size_t n) {
        if (!st.isOk()) return;
        const runtime::KvLayer l = kv.layer(layer);
        st = check(cudaMemcpyAsync(host + dst, static_cast<const uint8_t*>(isV ? l.v : l.k) + src, n,
                                   cudaMemcpyDeviceToHost, stream_),
                   "reading the KV cache");
    });
    KESTREL_RETURN_IF_ERROR(check(cudaStreamSynchronize(stream_), "reading the KV cache"));
    inFlight_ = false;
    KESTREL_RETURN_IF_ERROR(st);
    std::memcpy(out.data(), host, out.size());
    return Status::ok();
}

Status CudaBackend::writeKv(runtime::KvCache& kv, std::span<const int32_t> table, int64_t tokens,
                            std::span<const uint8_t> in) {
    KESTREL_RETURN_IF_ERROR(runtime::validateKvTransfer(kv.spec(), table, tokens, in.size()));
    KESTREL_RETURN_IF_ERROR(flush());
    cudaSetDevice(device_);
    PinnedBuffer staging;
    KESTREL_RETURN_IF_ERROR(check(cudaMallocHost(&staging.p, in.size() ? in.size() : 1), "allocating pinned host memory"));
    auto* host = static_cast<uint8_t*>(staging.p);
    std::memcpy(host, in.data(), in.size());
    Status st;
    runtime::forEachKvRun(kv.spec(), table.data(), tokens, [&](int layer, bool isV, size_t dst, size_t src, size_t n) {
        if (!st.isOk()) return;
        const runtime::KvLayer l = kv.layer(layer);
        st = check(cudaMemcpyAsync(static_cast<uint8_t*>(isV ? l.v : l.k) + dst, host + src, n,
                                   cudaMemcpyHostToDevice, stream_),
                   "writing the KV cache");
    });
    // The staging buffer is freed on return: wait for the copies that read it.
    KESTREL_RETURN_IF_ERROR(check(cudaStreamSynchronize(stream_), "writing the KV cache"));
    inFlight_ = false;
    return st;
}

}  // namespace kestrel::backend::cudaimpl
