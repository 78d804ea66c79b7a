// The CPU backend: weights are zero-copy views of the GGUF mapping, ops are
// kernels/cpu functions run on a ThreadPool this backend owns.
//
// Thread-safety: one op at a time (the pool runs one parallelFor at a time).
// Weights created here stay valid while the GgufFile they point into lives.
#pragma once

#include "backend.h"
#include "cpu_op_profile.h"
#include "ops.h"
#include "thread_pool.h"

#include <array>

namespace kestrel::backend {

class WeightArena;

class CpuBackend final : public Backend {
public:
    // How products are computed. Fast: int8 activations (kernels::matmul).
    // FloatActivations: dequantised weight tiles times float activations
    // (kernels::matmulFloatActivations), the model's maths without activation
    // rounding. Reference: kernels::matmulReference, double sums, very slow.
    enum class MatmulMode { Fast, FloatActivations, Reference };

    // threads <= 0: one per core.
    explicit CpuBackend(int threads, MatmulMode mode = MatmulMode::Fast);
    ~CpuBackend() override;

    std::string name() const override;
    uint64_t availableMemoryBytes() const override;
    int threads() const;
    kernels::ThreadPool& pool() { return *pool_; }

    Result<std::unique_ptr<Weight>> uploadWeight(const gguf::TensorInfo& info) override;
    Result<std::unique_ptr<Tensor>> createTensor(int64_t capacityRows, int64_t cols) override;
    Result<std::unique_ptr<IndexTensor>> createIndexTensor(int64_t capacity) override;
    Result<std::unique_ptr<runtime::KvCache>> createKvCache(const runtime::KvCacheSpec& spec) override;

    Status upload(IndexTensor& dst, std::span<const int32_t> values) override;
    Status upload(Tensor& dst, std::span<const float> values) override;
    Status download(const Tensor& src, std::span<float> out) override;
    // In place, rows in parallel; k = 1 (greedy) by kernels::argmaxRow.
    Status downloadTop(const Tensor& src, int32_t k, std::span<TopLogit> out) override;

    void embed(const Weight& table, const IndexTensor& ids, Tensor& out) override;
    void matmul(const Weight& w, const Tensor& x, Tensor& y) override;
    void matmulShared(const Tensor& x, std::span<const MatmulTarget> targets) override;
    void setDecodeRows(int64_t rows, int64_t) override { decodeRows_ = rows; }
    void addBias(Tensor& x, const Weight& bias) override;
    void rmsNorm(const Tensor& x, const Weight& gamma, float eps, Tensor& y, int groupSize) override;
    void rope(Tensor& x, int headDim, const IndexTensor& positions, const RopeParams& p) override;
    void storeKv(const Tensor& k, const Tensor& v, runtime::KvCache& kv, int layer, const KvBatch& batch) override;
    void attention(const Tensor& q, runtime::KvCache& kv, int layer, const KvBatch& batch, const AttentionParams& p,
                   Tensor& out) override;
    Status copyKvBlock(runtime::KvCache& kv, int32_t srcBlock, int32_t dstBlock) override;
    Status readKv(runtime::KvCache& kv, std::span<const int32_t> table, int64_t tokens, std::span<uint8_t> out) override;
    Status writeKv(runtime::KvCache& kv, std::span<const int32_t> table, int64_t tokens,
                   std::span<const uint8_t> in) override;
    void glu(const Tensor& gate, const Tensor& up, GluKind kind, Tensor& out) override;
    void add(const Tensor& a, const Tensor& b, Tensor& out) override;
    void scale(Tensor& x, float s) override;
    void softcap(Tensor& x, float cap) override;
    void copyRows(const Tensor& src, int64_t srcRow, int64_t count, Tensor& dst) override;

    // Host pointers of CPU objects (for tests and the model layer's host-side checks).
    static float* data(Tensor& t);
    static const float* data(const Tensor& t);

private:
    std::unique_ptr<kernels::ThreadPool> pool_;
    std::unique_ptr<WeightArena> arena_;  // repacked weights (weight_arena.h)
    MatmulMode matmulMode_ = MatmulMode::Fast;
    int64_t decodeRows_ = 0;
    // RoPE's frequencies per parameter set and the angles of the last positions rotated with them
    // (kernels::RopeAngles): every layer of a step rotates Q and K at the same positions, so the
    // frequencies (a pow per pair) and the angles (a cos and sin per pair and row) are computed once
    // per step, not twice per layer. Two sets: Gemma 3 alternates local and global bases.
    struct RopeEntry {
        RopeParams params;
        bool valid = false;
        std::array<float, 512> invFreq{};
        float mscale = 1.0f;
        kernels::RopeAngles angles;
    };
    std::array<RopeEntry, 2> rope_;
    size_t ropeNext_ = 0;
    RopeEntry& ropeEntry(const RopeParams& p);
    std::unique_ptr<CpuOpProfile> profile_ = CpuOpProfile::fromEnvironment();  // null unless KESTREL_CPU_PROFILE
    CpuOpProfile::Scope timed(const char* op, int64_t rows, int64_t wRows = 0, int64_t wCols = 0) {
        return CpuOpProfile::Scope(profile_.get(), op, rows, wRows, wCols);
    }
};

}  // namespace kestrel::backend
