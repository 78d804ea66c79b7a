// Internal to engine/backend/cuda: the device objects and the recorded op list.
#pragma once

#include "attention.cuh"
#include "cuda_backend.h"
#include "gemv.cuh"
#include "ops.cuh"

#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <vector>

namespace kestrel::backend::cudaimpl {

// The first failing CUDA call of an operation, as a Status naming it.
Status cudaStatus(cudaError_t err, const std::string& what);

class CudaWeight final : public Weight {
public:
    CudaWeight(const gguf::TensorInfo& info, int device)
        : Weight(info.name, info.type, static_cast<int64_t>(info.rows()), static_cast<int64_t>(info.rowLength())),
          device_(device) {}
    ~CudaWeight() override;
    int device() const override { return device_; }

    cuda::DevMatrix matrix{};       // 2-D weights
    float* f32 = nullptr;           // 1-D weights (norms, biases, rope factors), device
    std::vector<float> hostF32;     // and their host copy (rope frequencies are computed on the host)
    void* memory = nullptr;         // one allocation holds quants and scales

private:
    int device_;
};

class CudaTensor final : public Tensor {
public:
    CudaTensor(int64_t capacity, int64_t cols, int device) : Tensor(capacity, cols), device_(device) {}
    ~CudaTensor() override;
    int device() const override { return device_; }

    float* data = nullptr;
    // int8 form for the integer GEMVs, allocated on first need; `q8Rows` >= 0
    // while it matches `data` (tracked in record order).
    int8_t* q8 = nullptr;
    float2* q8meta = nullptr;
    int64_t q8Rows = -1;
    float* pinned = nullptr;       // host staging for upload/download, on first need
    float* attnScratch = nullptr;  // flash-decoding partials when this tensor is an attention output
    int64_t attnScratchFloats = 0;
    float2* top = nullptr;         // downloadTop's selection (rows x kTopKMax), device, on first need
    float2* topPinned = nullptr;   // and its host staging

private:
    int device_;
};

// Device and pinned host memory of one or more index tensors placed side by
// side (Backend::createIndexTensors); freed with the last of them.
struct IndexMemory {
    int32_t* dev = nullptr;
    int32_t* pinned = nullptr;
    ~IndexMemory();
};

class CudaIndexTensor final : public IndexTensor {
public:
    CudaIndexTensor(int64_t capacity, int device) : IndexTensor(capacity), device_(device) {}
    int device() const override { return device_; }
    std::shared_ptr<IndexMemory> memory;
    int32_t* data = nullptr;    // this tensor's part of memory->dev
    int32_t* pinned = nullptr;  // and of memory->pinned
    // Values an upload copies: the capacity rounded up to kIndexAlign, so a
    // neighbour's part starts where this one's copy ends.
    int64_t span = 0;
    static constexpr int64_t kIndexAlign = 16;

private:
    int device_;
};

// Device KV cache: per layer a K and a V slab of spec.blocks() blocks; the
// block tables of a step come from its KvBatch.
class CudaKvCache final : public runtime::KvCache {
public:
    ~CudaKvCache() override;
    const runtime::KvCacheSpec& spec() const override { return spec_; }
    int device() const override { return device_; }
    runtime::KvLayer layer(int index) override;
    size_t bytes() const override { return bytes_; }
    // The layer's slabs, without tables (the op fills those from its KvBatch).
    cuda::KvDev dev(int layer);

    runtime::KvCacheSpec spec_;
    int device_ = 0;
    size_t bytes_ = 0, layerBytes_ = 0;
    void* memory = nullptr;
};

enum class OpKind : int32_t {
    Upload, Embed, Quantize, Gemv, Glu, Add, RmsNorm, Rope, StoreKv, Attention, Scale, Softcap, AddBias, CopyRows
};

// One recorded op: plain data only, zero-filled, so two lists compare with memcmp.
struct Op {
    OpKind kind;
    int32_t i0, i1;
    int64_t n0, n1, n2;
    float f0;
    const void* p[8];
    cuda::DevMatrix m;
    cuda::RopeDev rope;
    cuda::KvDev kv;
    cuda::AttentionDev attn;

    static Op make(OpKind k) {
        Op op;
        std::memset(static_cast<void*>(&op), 0, sizeof(op));
        op.kind = k;
        return op;
    }
};

}  // namespace kestrel::backend::cudaimpl
