// Internal to engine/backend/cuda: the CudaBackend class (see cuda_backend.h).
#pragma once

#include "cuda_objects.h"
#include "cuda_step_trace.h"

#include <array>
#include <chrono>
#include <memory>
#include <span>
#include <vector>

namespace kestrel::backend::cudaimpl {

class CudaBackend final : public Backend {
public:
    static Result<std::unique_ptr<CudaBackend>> create(int device);
    ~CudaBackend() override;

    std::string name() const override { return name_; }
    uint64_t availableMemoryBytes() const override;
    double peakBandwidthGBs() const override;
    Result<std::unique_ptr<Weight>> uploadWeight(const gguf::TensorInfo& info) override;
    Result<std::unique_ptr<Tensor>> createTensor(int64_t capacityRows, int64_t cols) override;
    Result<std::unique_ptr<IndexTensor>> createIndexTensor(int64_t capacity) override;
    Result<std::vector<std::unique_ptr<IndexTensor>>> createIndexTensors(std::span<const int64_t> capacities) override;
    Result<std::unique_ptr<runtime::KvCache>> createKvCache(const runtime::KvCacheSpec& spec) override;

    Status upload(IndexTensor& dst, std::span<const int32_t> values) override;
    Status upload(Tensor& dst, std::span<const float> values) override;
    Status download(const Tensor& src, std::span<float> out) override;
    Status downloadTop(const Tensor& src, int32_t k, std::span<TopLogit> out) override;

    void embed(const Weight& table, const IndexTensor& ids, Tensor& out) override;
    void matmul(const Weight& w, const Tensor& x, Tensor& y) override;
    // Attention keeps the decode rows on the one-token kernels and runs the rest as tiles.
    void setDecodeRows(int64_t rows, int64_t lone) override {
        decodeRows_ = rows;
        loneRows_ = lone;
    }
    // Contexts of at most wholeAttentionKeys() keys take the whole-context attention (variant 1).
    int64_t setKeyBound(int64_t keys) override;
    bool replayStep(std::span<const int64_t> shape) override;
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

    // Runs everything recorded so far and waits for it (tests, benchmarks).
    Status synchronize();
    // Step statistics since creation: graph replays, captures, eager runs.
    struct Stats {
        int64_t replays = 0, captures = 0, eager = 0;
        int64_t timedReplays = 0;  // KESTREL_CUDA_STATS=1: replays timed on the GPU
        double replayGpuMs = 0;    // their GPU time, first kernel to last
    };
    Stats stats() const { return stats_; }
    // Turns graph capture off (eager execution of every step), for tests.
    void setGraphsEnabled(bool on) { graphsEnabled_ = on; }
    int deviceIndex() const { return device_; }

private:
    CudaBackend() = default;
    void record(const Op& op) { ops_.push_back(op); }
    Status flush();               // executes ops_ (graph or eager), leaves them empty
    // Launches with fusion; traceLabels (a step trace build capturing): each kernel's label.
    void execute(const std::vector<Op>& ops, std::vector<std::string>* traceLabels = nullptr);
    Status check(cudaError_t err, const std::string& what);
    Status ensureQ8(CudaTensor& t);
    struct RopeTable;
    const RopeTable* ropeTable(const RopeParams& p);
    void clearGraphs();

    int device_ = 0;
    std::string name_;
    cudaStream_t stream_ = nullptr;
    Status error_;  // sticky first error
    std::vector<Op> ops_;
    std::vector<Op> lastEager_;
    struct Graph {
        std::vector<Op> ops;
        cudaGraphExec_t exec = nullptr;
        int64_t lastUse = 0;
        std::vector<int64_t> shape;  // the replayStep shape it was recorded under (empty: none)
        StepTracer::Labels traceLabels;  // its kernels, in launch order (step trace builds)
    };
    std::vector<Graph> graphs_;
    // replayStep: the shape the step being recorded is tagged with, and the
    // graph the next flush launches without looking at ops_ (-1: none).
    std::vector<int64_t> stepShape_;
    int replayGraph_ = -1;
    Status launchGraph(Graph& g);
    int64_t useCounter_ = 0;
    bool graphsEnabled_ = true;
    bool inFlight_ = false;  // work launched since the last synchronisation
    struct RopeTable {
        std::array<float, 16> params{};  // the RopeParams this table was made for (no allocation per lookup)
        std::vector<float> key;
        float* dev = nullptr;
        float mscale = 1.0f;
    };
    std::vector<RopeTable> ropeTables_;
    Stats stats_;
    // KESTREL_CUDA_STATS=1: an event pair around every graph replay, read at the
    // next one (the step in between has synchronised), so that the GPU time per
    // step can be set against the wall time per token (the host's share, and
    // the kernels launched outside the graph, such as the top-k selection).
    static bool statsWanted();  // KESTREL_CUDA_STATS set (and not 0), read once
    cudaEvent_t replayEvents_[2] = {};
    bool replayTimed_ = false;
    void timeReplay(bool start);
    // KESTREL_CUDA_STATS=1 also splits the host's time per step (there is no
    // host profiler on the GPU machine): what it spends blocked on a result,
    // in its caller until the next step's first upload (sampler, scheduler),
    // while the model records the step's ops, finding the step's graph, and in
    // cudaGraphLaunch. Microseconds, summed over the steps.
    using HostClock = std::chrono::steady_clock;
    struct HostTimes {
        double waiting = 0, caller = 0, recording = 0, matching = 0, launching = 0;
        int64_t steps = 0;
    };
    HostTimes host_;
    HostClock::time_point resultAt_{}, firstUploadAt_{};
    static double usSince(HostClock::time_point t) {
        return std::chrono::duration<double, std::micro>(HostClock::now() - t).count();
    }
    Status waitForResult(const char* what);  // synchronises the stream (timed under KESTREL_CUDA_STATS)

    // KESTREL_CUDA_PROFILE=1: every step runs eagerly with an event pair around
    // each (fused) launch; the per-kernel table is printed when the backend is
    // destroyed (kestrel-cli bench --device cuda prints it at exit).
    struct ProfileRow {
        std::string label;
        int64_t calls = 0;
        double ms = 0;
    };
    bool profiling_ = false;
    int64_t decodeRows_ = 0, loneRows_ = 0;
    bool wholeAttention_ = false;  // setKeyBound: this step's contexts are short
    unsigned* decodeSync_ = nullptr;  // the persistent decode step's barrier words (zero between launches)
    std::vector<std::pair<std::string, std::pair<cudaEvent_t, cudaEvent_t>>> pendingEvents_;
    std::vector<cudaEvent_t> eventPool_;
    std::vector<ProfileRow> profile_;
    StepTracer tracer_;  // the in-graph timeline (builds with KESTREL_CUDA_STEP_TRACE)
    int64_t profiledSteps_ = 0;
    cudaEvent_t takeEvent();
    void collectProfile();
    void printProfile();
};

}  // namespace kestrel::backend::cudaimpl
