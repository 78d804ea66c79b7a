// Uploading weights (repacked into the kernels' layout) and the device KV cache.
//
// Integer types are repacked into a quant array (16 or 32 bytes per 32 values,
// so a lane's block is one or two aligned 16-byte loads and a warp's loads are
// contiguous) and a scale array: see cuda_repack.h for which GGUF type becomes
// which layout. Q2_K, Q3_K and the float types are dequantised on the host and
// stored as F16: correct, and two to four times the bytes of an int4 layout.
#include "cuda_backend_impl.h"
#include "cuda_repack.h"

#include "matmul.h"  // kernels/cpu: dequantizeRow
#include "ops.h"     // kernels/cpu: floatToHalf
#include "quant_blocks.h"

#include <cstring>
#include <thread>
#include <vector>

namespace kestrel::backend::cudaimpl {
namespace {

std::string mib(size_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

// Runs fn(rowBegin, rowEnd) over all cores: repacking an 8B model is a few GB of memory traffic.
template <typename Fn>
void parallelRows(int64_t rows, Fn fn) {
    const int threads = static_cast<int>(std::max(1u, std::min(16u, std::thread::hardware_concurrency())));
    if (rows < 256 || threads == 1) {
        fn(int64_t{0}, rows);
        return;
    }
    std::vector<std::thread> pool;
    const int64_t per = (rows + threads - 1) / threads;
    for (int t = 0; t < threads; ++t) {
        const int64_t b = t * per, e = std::min(rows, b + per);
        if (b < e) pool.emplace_back([=] { fn(b, e); });
    }
    for (auto& th : pool) th.join();
}

}  // namespace

Result<std::unique_ptr<Weight>> CudaBackend::uploadWeight(const gguf::TensorInfo& info) {
    const auto traits = ggmlTypeTraits(info.type);
    if (!traits || !traits->computeSupported || !info.data)
        return Status(ErrorCode::Unsupported, "tensor '" + info.name + "' has type " + std::string(ggmlTypeName(info.type)) +
                                                  ", which the CUDA backend cannot compute with");
    cudaSetDevice(device_);
    auto w = std::make_unique<CudaWeight>(info, device_);
    const int64_t rows = w->rows(), cols = w->cols();
    const bool vector1d = info.dims.size() <= 1;

    // Host image of the device layout.
    std::vector<uint8_t> host;
    size_t scalesOffset = 0;
    cuda::DevFormat format = cuda::DevFormat::F16;
    if (vector1d) {
        if (info.type != GgmlType::F32)
            return Status(ErrorCode::Unsupported, "tensor '" + info.name + "': 1-D tensors must be F32");
        w->hostF32.resize(static_cast<size_t>(cols));
        std::memcpy(w->hostF32.data(), info.data, sizeof(float) * static_cast<size_t>(cols));
        host.resize(sizeof(float) * static_cast<size_t>(cols));
        std::memcpy(host.data(), info.data, host.size());
    } else if (const auto layout = deviceLayoutFor(info.type); layout && cols % 32 == 0) {
        const int64_t nb = cols / 32;
        format = layout->format;
        scalesOffset = (static_cast<size_t>(rows * nb) * layout->qsBytes + 255) / 256 * 256;
        // + 16: the persistent decode step copies scales in 16-byte-aligned
        // windows, which may reach up to 15 bytes past the last row's scales.
        host.resize(scalesOffset + static_cast<size_t>(rows * nb) * layout->scaleBytes + 16);
        uint8_t* qs = host.data();
        uint8_t* sc = host.data() + scalesOffset;
        parallelRows(rows, [&](int64_t r0, int64_t r1) { repackRows(info.type, info.data, cols, r0, r1, qs, sc); });
    } else {
        host.resize(sizeof(uint16_t) * static_cast<size_t>(rows * cols));
        auto* dst = reinterpret_cast<uint16_t*>(host.data());
        const auto rowBytes = ggmlRowBytes(info.type, static_cast<uint64_t>(cols));
        if (!rowBytes) return Status(ErrorCode::InvalidFile, "tensor '" + info.name + "': rows are not whole blocks of its type");
        parallelRows(rows, [&](int64_t r0, int64_t r1) {
            std::vector<float> row(static_cast<size_t>(cols));
            for (int64_t r = r0; r < r1; ++r) {
                const uint8_t* src = info.data + static_cast<size_t>(r) * *rowBytes;
                if (info.type == GgmlType::F16) {
                    std::memcpy(dst + r * cols, src, static_cast<size_t>(cols) * 2);
                    continue;
                }
                kernels::dequantizeRow(info.type, src, row.data(), cols);
                for (int64_t c = 0; c < cols; ++c) dst[r * cols + c] = kernels::floatToHalf(row[static_cast<size_t>(c)]);
            }
        });
    }

    if (cudaError_t e = cudaMalloc(&w->memory, host.size()); e != cudaSuccess) {
        cudaGetLastError();
        size_t freeB = 0, totalB = 0;
        cudaMemGetInfo(&freeB, &totalB);
        return Status(ErrorCode::OutOfMemory, "not enough GPU memory for tensor '" + info.name + "': it needs " +
                                                  mib(host.size()) + ", " + mib(freeB) + " of " + mib(totalB) +
                                                  " are free on " + name_ +
                                                  " (use a smaller quantisation, a shorter context or --device cpu)");
    }
    KESTREL_RETURN_IF_ERROR(check(cudaMemcpy(w->memory, host.data(), host.size(), cudaMemcpyHostToDevice),
                                  "uploading tensor '" + info.name + "'"));
    if (vector1d) {
        w->f32 = static_cast<float*>(w->memory);
    } else {
        w->matrix.format = format;
        w->matrix.qs = w->memory;
        w->matrix.scales = format == cuda::DevFormat::F16 ? nullptr : static_cast<uint8_t*>(w->memory) + scalesOffset;
        w->matrix.rows = rows;
        w->matrix.cols = cols;
    }
    return std::unique_ptr<Weight>(std::move(w));
}

CudaKvCache::~CudaKvCache() { cudaFree(memory); }

runtime::KvLayer CudaKvCache::layer(int index) {
    auto* base = static_cast<uint8_t*>(memory) + static_cast<size_t>(index) * 2 * layerBytes_;
    return runtime::KvLayer{base, base + layerBytes_, static_cast<int64_t>(spec_.kvHeads) * spec_.headDim,
                            spec_.blockTokens};
}

cuda::KvDev CudaKvCache::dev(int index) {
    const runtime::KvLayer l = layer(index);
    cuda::KvDev d;
    d.k = l.k;
    d.v = l.v;
    d.blockSize = spec_.blockTokens;
    d.rowStride = l.rowStride;
    d.f16 = spec_.storage == runtime::KvStorage::F16;
    return d;
}

Result<std::unique_ptr<runtime::KvCache>> CudaBackend::createKvCache(const runtime::KvCacheSpec& spec) {
    KESTREL_RETURN_IF_ERROR(runtime::validateKvSpec(spec));
    if (spec.storage == runtime::KvStorage::Q8)
        return Status(ErrorCode::Unsupported, "the CUDA backend keeps the KV cache in 16 or 32 bits; 8-bit is CPU-only");
    if (spec.headDim > 256)
        return Status(ErrorCode::Unsupported, "the CUDA attention kernel supports head sizes up to 256, the model has " +
                                                  std::to_string(spec.headDim));
    cudaSetDevice(device_);
    auto kv = std::make_unique<CudaKvCache>();
    kv->spec_ = spec;
    kv->spec_.capacity = spec.blocks() * spec.blockTokens;
    kv->device_ = device_;
    kv->layerBytes_ = (static_cast<size_t>(kv->spec_.capacity) * spec.rowBytes() + 255) / 256 * 256;
    kv->bytes_ = kv->layerBytes_ * 2 * static_cast<size_t>(spec.layers);
    if (cudaError_t e = cudaMalloc(&kv->memory, kv->bytes_); e != cudaSuccess) {
        cudaGetLastError();
        size_t freeB = 0, totalB = 0;
        cudaMemGetInfo(&freeB, &totalB);
        return Status(ErrorCode::OutOfMemory, "not enough GPU memory for a KV cache of " + std::to_string(spec.capacity) +
                                                  " positions: it needs " + mib(kv->bytes_) + ", " + mib(freeB) +
                                                  " are free (use a shorter context)");
    }
    return std::unique_ptr<runtime::KvCache>(std::move(kv));
}

}  // namespace kestrel::backend::cudaimpl
