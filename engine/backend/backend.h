// The compute interface the model layer is written against.
//
// A Backend owns where memory lives and how ops run: the CPU backend keeps
// weights in the GGUF mapping and runs kernels/cpu on its own ThreadPool; a
// CUDA backend will hold weights in device memory and replay one captured
// graph per decode step. So the interface is coarse (one call per op over a
// whole batch), data-dependent values travel in backend tensors (token ids,
// positions), and no op needs the host to read a result mid-step.
//
// Placement is a property of each object: every Weight, Tensor and KV cache
// reports its device, so one model may later span devices.
//
// Ownership: objects made by a backend must be used with that backend and
// must not outlive it. Thread-safety: a backend runs one op at a time; give
// each concurrently stepped sequence its own backend (they may share weights
// of a CPU backend, which are read-only views of the mapping).
#pragma once

#include "gguf_file.h"
#include "kestrel/status.h"
#include "kv_cache.h"
#include "top_logit.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace kestrel::backend {

// A weight tensor as the backend keeps it. rows x cols in GGUF terms: cols =
// dims[0] (the row length), rows = the product of the other dims.
class Weight {
public:
    virtual ~Weight() = default;
    const std::string& name() const { return name_; }
    GgmlType type() const { return type_; }
    int64_t rows() const { return rows_; }
    int64_t cols() const { return cols_; }
    virtual int device() const = 0;  // -1: host

protected:
    Weight(std::string name, GgmlType type, int64_t rows, int64_t cols)
        : name_(std::move(name)), type_(type), rows_(rows), cols_(cols) {}

private:
    std::string name_;
    GgmlType type_;
    int64_t rows_, cols_;
};

// Float32 activations [rows, cols], allocated once for `capacityRows` rows;
// rows can be lowered and raised again (a batch shorter than the maximum).
class Tensor {
public:
    virtual ~Tensor() = default;
    int64_t rows() const { return rows_; }
    int64_t cols() const { return cols_; }
    int64_t capacityRows() const { return capacity_; }
    void setRows(int64_t rows) { rows_ = rows < 0 ? 0 : (rows > capacity_ ? capacity_ : rows); }
    virtual int device() const = 0;

protected:
    Tensor(int64_t capacity, int64_t cols) : rows_(capacity), cols_(cols), capacity_(capacity) {}

private:
    int64_t rows_, cols_, capacity_;
};

// int32 values (token ids, positions): capacity fixed at creation, size settable.
class IndexTensor {
public:
    virtual ~IndexTensor() = default;
    int64_t size() const { return size_; }
    int64_t capacity() const { return capacity_; }
    virtual int device() const = 0;

protected:
    explicit IndexTensor(int64_t capacity) : size_(0), capacity_(capacity) {}
    int64_t size_;
    int64_t capacity_;
    friend class Backend;
};

enum class GluKind { Silu, GeluTanh };
enum class RopeScaling { None, Linear, Llama3, Yarn };

struct RopeParams {
    int dims = 0;            // rotated dims per head
    float base = 10000.0f;
    float freqScale = 1.0f;  // 1 / factor of linear scaling (kept for the CUDA kernels' convention)
    bool neox = false;       // rotate pairs (i, i + dims/2) instead of (2i, 2i + 1)
    RopeScaling scaling = RopeScaling::None;
    float factor = 1.0f;
    float lowFreqFactor = 1.0f;    // llama3
    float highFreqFactor = 4.0f;   // llama3
    float originalContext = 0.0f;  // llama3, yarn
    float yarnBetaFast = 32.0f;
    float yarnBetaSlow = 1.0f;
    float yarnExtFactor = 1.0f;
    float attnFactor = 1.0f;
    const Weight* freqFactors = nullptr;  // rope_freqs.weight (F32, dims/2), when the model has one
    bool operator==(const RopeParams&) const = default;
};

// How the tokens of one step find their KV: token t sits at position
// positions[t] of the sequence whose block table is row seqRows[t] of `tables`
// (tableWidth block ids per row; block i of a row holds positions
// [i * blockTokens, (i + 1) * blockTokens)). Tokens of several sequences may
// share a step (continuous batching); attention of token t sees positions
// <= positions[t] of its own sequence only, including rows stored in this step.
struct KvBatch {
    const IndexTensor* positions = nullptr;
    const IndexTensor* seqRows = nullptr;
    const IndexTensor* tables = nullptr;
    int32_t tableWidth = 0;
};

struct AttentionParams {
    int heads = 0;
    int kvHeads = 0;
    int headDim = 0;
    float scale = 1.0f;
    int slidingWindow = 0;  // 0: full causal attention
    float softcap = 0.0f;   // 0: none
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    // Memory free for caches on this backend's device (host RAM for the CPU).
    virtual uint64_t availableMemoryBytes() const = 0;
    // The device memory's bandwidth by its specifications in GB/s, the roofline of a
    // decode step (kestrel-cli bench); 0 when the backend cannot tell.
    virtual double peakBandwidthGBs() const { return 0.0; }

    // A weight from the file; the CPU backend keeps a pointer into the mapping
    // (the GgufFile must outlive the weight). Rejects types it cannot compute with.
    virtual Result<std::unique_ptr<Weight>> uploadWeight(const gguf::TensorInfo& info) = 0;

    virtual Result<std::unique_ptr<Tensor>> createTensor(int64_t capacityRows, int64_t cols) = 0;
    virtual Result<std::unique_ptr<IndexTensor>> createIndexTensor(int64_t capacity) = 0;
    // Index tensors uploaded together before every step (its ids, positions,
    // sequence rows and block tables): a backend may place them side by side so
    // that their uploads become one transfer (the CUDA backend does: four
    // copies were ~26 us of a 510 us SmolLM2 step). The default makes them one
    // by one.
    virtual Result<std::vector<std::unique_ptr<IndexTensor>>> createIndexTensors(std::span<const int64_t> capacities);
    virtual Result<std::unique_ptr<runtime::KvCache>> createKvCache(const runtime::KvCacheSpec& spec) = 0;

    // Host <-> backend transfers (the only host-visible points of a step).
    virtual Status upload(IndexTensor& dst, std::span<const int32_t> values) = 0;  // sets size
    virtual Status upload(Tensor& dst, std::span<const float> values) = 0;       // rows * cols values
    virtual Status download(const Tensor& src, std::span<float> out) = 0;        // rows * cols values
    // The k best values of each row of `src` with their column (ties: lower column
    // first), in rank order: out[r * k + i], k <= cols. For sampling a batch's logits
    // without moving whole rows; the default downloads the rows and selects on the host.
    virtual Status downloadTop(const Tensor& src, int32_t k, std::span<TopLogit> out);

    // out[i] = table row ids[i] (dequantised); out.rows = ids.size.
    virtual void embed(const Weight& table, const IndexTensor& ids, Tensor& out) = 0;
    // y[t] = W x[t]; y.rows = x.rows.
    virtual void matmul(const Weight& w, const Tensor& x, Tensor& y) = 0;
    // Several products of the same x (Q, K and V; gate and up): the results of
    // one matmul each, which is what the default does. A backend may share the
    // work on x between them (the CPU quantises it once and runs all rows in
    // one parallel loop; the CUDA backend fuses neighbouring matmuls anyway).
    struct MatmulTarget {
        const Weight* w;
        Tensor* y;
    };
    virtual void matmulShared(const Tensor& x, std::span<const MatmulTarget> targets) {
        for (const MatmulTarget& t : targets) matmul(*t.w, x, *t.y);
    }
    // Skipping the recording of a step seen before. A caller that records the
    // same ops whenever `shape` is the same (BatchRunner: its identity and the
    // step's batch shape; only the uploaded values differ) asks, after the
    // step's uploads, whether the backend still holds what it recorded last
    // time for that shape; if so (true) it records nothing more and goes on to
    // the step's download, which runs the held step. The CUDA backend holds
    // steps as graphs: recording a decode step's ~500 ops took 30-45 us of host
    // time per token on the critical path. The default holds nothing.
    virtual bool replayStep(std::span<const int64_t> shape) {
        (void)shape;
        return false;
    }
    // Until the next call, the first `rows` rows of every matmul's x are decode
    // rows: the next token of a sequence, or the next few being checked
    // (speculative decoding, model::SeqChunk::speculative). A backend may
    // compute them apart from the rest so that a sequence's result does not
    // depend on what else shares the step (the CPU does; see
    // kernels::matmulDecode). The first `lone` of them (<= rows) are each the
    // only row of their sequence in the step, so their step writes no key they
    // read (CUDA's attention loads their keys early). 0: no decode rows. The
    // default ignores it.
    virtual void setDecodeRows(int64_t rows, int64_t lone) {
        (void)rows;
        (void)lone;
    }
    // Until the next call, no row of a recorded step attends to more than `keys`
    // keys (0: no bound known). A backend may record attention differently under
    // a bound (CUDA: a short context is walked whole by one block per kv head,
    // without the kernel that merges key ranges); the returned variant tells its
    // recordings apart, and a caller that holds steps by shape (replayStep) makes
    // it part of the shape, so a step recorded for short contexts is not replayed
    // for long ones. The default records one way: variant 0.
    virtual int64_t setKeyBound(int64_t keys) {
        (void)keys;
        return 0;
    }
    virtual void addBias(Tensor& x, const Weight& bias) = 0;
    // Per group of groupSize values (groupSize = cols, or head size for Q/K norm); y may be x.
    virtual void rmsNorm(const Tensor& x, const Weight& gamma, float eps, Tensor& y, int groupSize) = 0;
    virtual void rope(Tensor& x, int headDim, const IndexTensor& positions, const RopeParams& p) = 0;
    // Writes k, v rows at their tokens' positions of one layer of the cache.
    virtual void storeKv(const Tensor& k, const Tensor& v, runtime::KvCache& kv, int layer, const KvBatch& batch) = 0;
    virtual void attention(const Tensor& q, runtime::KvCache& kv, int layer, const KvBatch& batch,
                           const AttentionParams& p, Tensor& out) = 0;
    virtual void glu(const Tensor& gate, const Tensor& up, GluKind kind, Tensor& out) = 0;
    virtual void add(const Tensor& a, const Tensor& b, Tensor& out) = 0;
    virtual void scale(Tensor& x, float s) = 0;
    virtual void softcap(Tensor& x, float cap) = 0;
    // dst rows [0, count) = src rows [srcRow, srcRow + count); dst.rows = count.
    virtual void copyRows(const Tensor& src, int64_t srcRow, int64_t count, Tensor& dst) = 0;

    // KV blocks outside a step (copy-on-write, snapshots); each waits for the
    // work queued before it.
    // Every layer's K and V of block src into block dst.
    virtual Status copyKvBlock(runtime::KvCache& kv, int32_t srcBlock, int32_t dstBlock) = 0;
    // Positions [0, tokens) of the sequence with block table `table`, as bytes
    // layer by layer: K rows, then V rows (runtime::snapshotPayloadBytes).
    virtual Status readKv(runtime::KvCache& kv, std::span<const int32_t> table, int64_t tokens,
                          std::span<uint8_t> out) = 0;
    virtual Status writeKv(runtime::KvCache& kv, std::span<const int32_t> table, int64_t tokens,
                           std::span<const uint8_t> in) = 0;

protected:
    static void setIndexSize(IndexTensor& t, int64_t n) { t.size_ = n; }
    // downloadTop's contract on its arguments (k in [1, cols], out rows * k long).
    static Status checkTopArgs(const Tensor& src, int32_t k, size_t outSize);
};

}  // namespace kestrel::backend
