// CudaBackend: recording ops and moving data across the host boundary.
#include "cuda_backend_impl.h"
#include "decode_step.cuh"
#include "top_k.cuh"

#include "ops.h"  // kernels/cpu: ropeFrequencies, the host reference of RoPE's scaling
#include "rope_config.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kestrel::backend::cudaimpl {
namespace {

CudaTensor& ct(Tensor& t) { return static_cast<CudaTensor&>(t); }
const CudaTensor& ct(const Tensor& t) { return static_cast<const CudaTensor&>(t); }
const CudaIndexTensor& ci(const IndexTensor& t) { return static_cast<const CudaIndexTensor&>(t); }
const CudaWeight& cw(const Weight& w) { return static_cast<const CudaWeight&>(w); }

// Field by field, so padding inside the copied structs stays zero and op lists compare bytewise.
void setMatrix(cuda::DevMatrix& d, const cuda::DevMatrix& s) {
    d.format = s.format;
    d.qs = s.qs;
    d.scales = s.scales;
    d.rows = s.rows;
    d.cols = s.cols;
}
void setKv(cuda::KvDev& d, const cuda::KvDev& s) {
    d.k = s.k;
    d.v = s.v;
    d.table = s.table;
    d.seqRows = s.seqRows;
    d.tableWidth = s.tableWidth;
    d.blockSize = s.blockSize;
    d.rowStride = s.rowStride;
    d.f16 = s.f16;
}

// The layer's slabs with the step's block tables.
cuda::KvDev kvDev(runtime::KvCache& kv, int layer, const KvBatch& batch) {
    cuda::KvDev d = static_cast<CudaKvCache&>(kv).dev(layer);
    d.table = ci(*batch.tables).data;
    d.seqRows = batch.seqRows ? ci(*batch.seqRows).data : nullptr;
    d.tableWidth = batch.tableWidth;
    return d;
}

// Values an index tensor of this capacity takes in its group (CudaIndexTensor::span).
int64_t indexSpan(int64_t capacity) {
    constexpr int64_t a = CudaIndexTensor::kIndexAlign;
    return (capacity + a - 1) / a * a;
}

// Writing a tensor invalidates its int8 form.
void written(const Tensor& t) { const_cast<CudaTensor&>(ct(t)).q8Rows = -1; }

}  // namespace

Status cudaStatus(cudaError_t err, const std::string& what) {
    if (err == cudaSuccess) return Status::ok();
    const ErrorCode code = err == cudaErrorMemoryAllocation ? ErrorCode::OutOfMemory : ErrorCode::Internal;
    return Status(code, "CUDA: " + what + ": " + cudaGetErrorString(err));
}

CudaWeight::~CudaWeight() { cudaFree(memory); }
CudaTensor::~CudaTensor() {
    cudaFree(data);
    cudaFree(q8);
    cudaFree(q8meta);
    cudaFree(attnScratch);
    cudaFree(top);
    cudaFreeHost(pinned);
    cudaFreeHost(topPinned);
}
IndexMemory::~IndexMemory() {
    cudaFree(dev);
    cudaFreeHost(pinned);
}

Status CudaBackend::check(cudaError_t err, const std::string& what) {
    if (err != cudaSuccess && error_.isOk()) error_ = cudaStatus(err, what);
    return err == cudaSuccess ? Status::ok() : cudaStatus(err, what);
}

CudaBackend::~CudaBackend() {
    cudaSetDevice(device_);
    if (stream_) cudaStreamSynchronize(stream_);
    if (profiling_) printProfile();
    tracer_.print();
    if (cuda::decodeStepTraced()) cuda::printDecodeStepTrace();
    if (statsWanted())
        std::fprintf(stderr, "cuda steps: %lld graph replays (%lld timed: %.1f us each on the GPU), %lld captures, %lld eager\n",
                     static_cast<long long>(stats_.replays), static_cast<long long>(stats_.timedReplays),
                     stats_.timedReplays ? 1000.0 * stats_.replayGpuMs / static_cast<double>(stats_.timedReplays) : 0.0,
                     static_cast<long long>(stats_.captures), static_cast<long long>(stats_.eager));
    if (statsWanted() && host_.steps > 0) {
        const double n = static_cast<double>(host_.steps);
        std::fprintf(stderr,
                     "cuda host per step (%lld steps, us): waiting %.1f, caller %.1f, recording %.1f, matching %.1f, "
                     "launching %.1f\n",
                     static_cast<long long>(host_.steps), host_.waiting / n, host_.caller / n, host_.recording / n,
                     host_.matching / n, host_.launching / n);
    }
    clearGraphs();
    for (auto& r : ropeTables_) cudaFree(r.dev);
    cudaFree(decodeSync_);
    if (stream_) cudaStreamDestroy(stream_);
    for (cudaEvent_t e : replayEvents_)
        if (e) cudaEventDestroy(e);
}

Result<std::unique_ptr<Tensor>> CudaBackend::createTensor(int64_t capacityRows, int64_t cols) {
    if (capacityRows <= 0 || cols <= 0) return Status(ErrorCode::InvalidArgument, "tensor size must be positive");
    cudaSetDevice(device_);
    auto t = std::make_unique<CudaTensor>(capacityRows, cols, device_);
    const size_t bytes = sizeof(float) * static_cast<size_t>(capacityRows * cols);
    if (cudaError_t e = cudaMalloc(&t->data, bytes); e != cudaSuccess)
        return cudaStatus(e, "allocating a " + std::to_string(capacityRows) + " x " + std::to_string(cols) +
                                 " activation tensor (" + std::to_string(bytes >> 20) + " MiB)");
    return std::unique_ptr<Tensor>(std::move(t));
}

Result<std::unique_ptr<IndexTensor>> CudaBackend::createIndexTensor(int64_t capacity) {
    auto made = createIndexTensors(std::span<const int64_t>(&capacity, 1));
    if (!made) return made.status();
    return std::move(made.value().front());
}

Result<std::vector<std::unique_ptr<IndexTensor>>> CudaBackend::createIndexTensors(std::span<const int64_t> capacities) {
    int64_t total = 0;
    for (int64_t c : capacities) {
        if (c <= 0) return Status(ErrorCode::InvalidArgument, "index tensor size must be positive");
        total += indexSpan(c);
    }
    cudaSetDevice(device_);
    auto memory = std::make_shared<IndexMemory>();
    const size_t bytes = sizeof(int32_t) * static_cast<size_t>(total);
    if (cudaError_t e = cudaMalloc(&memory->dev, bytes); e != cudaSuccess) return cudaStatus(e, "allocating index tensors");
    if (cudaError_t e = cudaMallocHost(&memory->pinned, bytes); e != cudaSuccess)
        return cudaStatus(e, "allocating pinned host memory");
    std::vector<std::unique_ptr<IndexTensor>> out;
    int64_t at = 0;
    for (int64_t c : capacities) {
        auto t = std::make_unique<CudaIndexTensor>(c, device_);
        t->memory = memory;
        t->data = memory->dev + at;
        t->pinned = memory->pinned + at;
        t->span = indexSpan(c);
        at += t->span;
        out.push_back(std::move(t));
    }
    return out;
}

Status CudaBackend::upload(IndexTensor& dst, std::span<const int32_t> values) {
    if (static_cast<int64_t>(values.size()) > dst.capacity())
        return Status(ErrorCode::InvalidArgument, "index upload larger than its tensor");
    // The staging buffer is read when the step runs: anything recorded that
    // is not an upload belongs to the previous step and runs first.
    if (std::any_of(ops_.begin(), ops_.end(), [](const Op& o) { return o.kind != OpKind::Upload; }))
        KESTREL_RETURN_IF_ERROR(flush());
    if (inFlight_) {
        KESTREL_RETURN_IF_ERROR(check(cudaStreamSynchronize(stream_), "waiting for the previous step"));
        inFlight_ = false;
    }
    if (!error_.isOk()) return error_;
    if (statsWanted() && ops_.empty() && resultAt_ != HostClock::time_point{}) {
        host_.caller += usSince(resultAt_);
        resultAt_ = {};
        firstUploadAt_ = HostClock::now();
    }
    auto& t = static_cast<CudaIndexTensor&>(dst);
    std::memcpy(t.pinned, values.data(), values.size_bytes());
    setIndexSize(dst, static_cast<int64_t>(values.size()));
    // The copy covers the whole span so the op (and a graph holding it) is the
    // same whatever the size; stale tail values are never read. Neighbouring
    // tensors' uploads join into one copy (execute()).
    Op op = Op::make(OpKind::Upload);
    op.p[0] = t.data;
    op.p[1] = t.pinned;
    op.n0 = static_cast<int64_t>(sizeof(int32_t)) * t.span;
    op.p[2] = t.memory.get();  // only parts of one allocation may join (a copy cannot cross two)
    record(op);
    return Status::ok();
}

Status CudaBackend::upload(Tensor& dst, std::span<const float> values) {
    if (static_cast<int64_t>(values.size()) != dst.rows() * dst.cols())
        return Status(ErrorCode::InvalidArgument, "tensor upload size does not match rows * cols");
    KESTREL_RETURN_IF_ERROR(flush());
    if (inFlight_) {
        KESTREL_RETURN_IF_ERROR(check(cudaStreamSynchronize(stream_), "waiting for the previous step"));
        inFlight_ = false;
    }
    auto& t = ct(dst);
    // Plain float uploads are for tests and tools: a synchronous copy is fine.
    KESTREL_RETURN_IF_ERROR(check(cudaMemcpy(t.data, values.data(), values.size_bytes(), cudaMemcpyHostToDevice),
                                  "uploading a tensor"));
    written(dst);
    return error_;
}

Status CudaBackend::download(const Tensor& src, std::span<float> out) {
    if (static_cast<int64_t>(out.size()) != src.rows() * src.cols())
        return Status(ErrorCode::InvalidArgument, "tensor download size does not match rows * cols");
    KESTREL_RETURN_IF_ERROR(flush());
    auto& t = const_cast<CudaTensor&>(ct(src));
    if (!t.pinned) {
        const size_t bytes = sizeof(float) * static_cast<size_t>(t.capacityRows() * t.cols());
        KESTREL_RETURN_IF_ERROR(check(cudaMallocHost(&t.pinned, bytes), "allocating pinned host memory"));
    }
    KESTREL_RETURN_IF_ERROR(check(cudaMemcpyAsync(t.pinned, t.data, out.size_bytes(), cudaMemcpyDeviceToHost, stream_),
                                  "downloading a tensor"));
    KESTREL_RETURN_IF_ERROR(waitForResult("running the step"));
    std::memcpy(out.data(), t.pinned, out.size_bytes());
    return Status::ok();
}

Status CudaBackend::downloadTop(const Tensor& src, int32_t k, std::span<TopLogit> out) {
    if (k > cuda::kTopKMax) return Backend::downloadTop(src, k, out);  // the host selects from whole rows
    KESTREL_RETURN_IF_ERROR(checkTopArgs(src, k, out.size()));
    const int64_t rows = src.rows();
    KESTREL_RETURN_IF_ERROR(flush());
    auto& t = const_cast<CudaTensor&>(ct(src));
    const size_t bytes = sizeof(float2) * static_cast<size_t>(t.capacityRows()) * cuda::kTopKMax;
    if (!t.top) KESTREL_RETURN_IF_ERROR(check(cudaMalloc(&t.top, bytes), "allocating the top-k selection"));
    if (!t.topPinned) KESTREL_RETURN_IF_ERROR(check(cudaMallocHost(&t.topPinned, bytes), "allocating pinned host memory"));
    cuda::launchTopK(t.data, rows, src.cols(), k, t.top, stream_);
    static_assert(sizeof(TopLogit) == sizeof(float2), "TopLogit is the kernel's (value, id bits) pair");
    KESTREL_RETURN_IF_ERROR(check(cudaMemcpyAsync(t.topPinned, t.top, out.size_bytes(), cudaMemcpyDeviceToHost, stream_),
                                  "downloading the top-k selection"));
    KESTREL_RETURN_IF_ERROR(waitForResult("running the step"));
    std::memcpy(out.data(), t.topPinned, out.size_bytes());
    return Status::ok();
}

Status CudaBackend::waitForResult(const char* what) {
    const bool timed = statsWanted();
    const HostClock::time_point start = timed ? HostClock::now() : HostClock::time_point{};
    KESTREL_RETURN_IF_ERROR(check(cudaStreamSynchronize(stream_), what));
    inFlight_ = false;
    if (timed) {
        host_.waiting += usSince(start);
        resultAt_ = HostClock::now();
    }
    return error_;
}

Status CudaBackend::synchronize() {
    KESTREL_RETURN_IF_ERROR(flush());
    KESTREL_RETURN_IF_ERROR(check(cudaStreamSynchronize(stream_), "running the step"));
    inFlight_ = false;
    return error_;
}

Status CudaBackend::ensureQ8(CudaTensor& t) {
    if (t.q8) return Status::ok();
    const int64_t n = t.capacityRows() * t.cols();
    KESTREL_RETURN_IF_ERROR(check(cudaMalloc(&t.q8, static_cast<size_t>(n)), "allocating int8 activations"));
    return check(cudaMalloc(&t.q8meta, sizeof(float2) * static_cast<size_t>(n / 32 + 1)), "allocating int8 activations");
}

void CudaBackend::embed(const Weight& table, const IndexTensor& ids, Tensor& out) {
    out.setRows(ids.size());
    Op op = Op::make(OpKind::Embed);
    setMatrix(op.m, cw(table).matrix);
    op.p[0] = ci(ids).data;
    op.p[1] = ct(out).data;
    op.n0 = ids.size();
    record(op);
    written(out);
}

void CudaBackend::matmul(const Weight& w, const Tensor& x, Tensor& y) {
    y.setRows(x.rows());
    const CudaWeight& weight = cw(w);
    auto& xt = const_cast<CudaTensor&>(ct(x));
    const bool integer = weight.matrix.format != cuda::DevFormat::F16;
    if (integer && xt.q8Rows != x.rows()) {
        if (!ensureQ8(xt).isOk()) return;
        Op q = Op::make(OpKind::Quantize);
        q.p[0] = xt.data;
        q.p[1] = xt.q8;
        q.p[2] = xt.q8meta;
        q.n0 = x.rows();
        q.n1 = x.cols();
        record(q);
        xt.q8Rows = x.rows();
    }
    Op op = Op::make(OpKind::Gemv);
    setMatrix(op.m, weight.matrix);
    op.p[0] = xt.data;
    op.p[1] = integer ? xt.q8 : nullptr;
    op.p[2] = integer ? xt.q8meta : nullptr;
    op.p[3] = ct(y).data;
    op.n0 = x.rows();
    record(op);
    written(y);
}

void CudaBackend::addBias(Tensor& x, const Weight& bias) {
    Op op = Op::make(OpKind::AddBias);
    op.p[0] = ct(x).data;
    op.p[1] = cw(bias).f32;
    op.n0 = x.rows();
    op.n1 = x.cols();
    record(op);
    written(x);
}

void CudaBackend::rmsNorm(const Tensor& x, const Weight& gamma, float eps, Tensor& y, int groupSize) {
    y.setRows(x.rows());
    auto& yt = ct(y);
    const bool q8 = groupSize == y.cols() && y.cols() % 32 == 0 && ensureQ8(yt).isOk();
    Op op = Op::make(OpKind::RmsNorm);
    op.p[0] = ct(x).data;
    op.p[1] = cw(gamma).f32;
    op.p[2] = yt.data;
    op.p[3] = q8 ? yt.q8 : nullptr;
    op.p[4] = q8 ? yt.q8meta : nullptr;
    op.f0 = eps;
    op.n0 = x.rows();
    op.n1 = x.cols();
    op.n2 = groupSize;
    record(op);
    yt.q8Rows = q8 ? y.rows() : -1;
}

const CudaBackend::RopeTable* CudaBackend::ropeTable(const RopeParams& p) {
    // Layers share a handful of parameter sets: look them up before computing 64 pow()s per call.
    const uintptr_t ff = reinterpret_cast<uintptr_t>(p.freqFactors);
    const std::array<float, 16> key{float(p.dims), p.base, p.freqScale, p.neox ? 1.0f : 0.0f, float(int(p.scaling)), p.factor,
                           p.lowFreqFactor, p.highFreqFactor, p.originalContext, p.yarnBetaFast, p.yarnBetaSlow,
                           p.yarnExtFactor, p.attnFactor, float(ff & 0xffffffu), float((ff >> 24) & 0xffffffu),
                           float(ff >> 48)};
    for (const RopeTable& r : ropeTables_)
        if (r.params == key) return &r;
    const kernels::RopeConfig cfg = ropeConfigOf(p, p.freqFactors ? cw(*p.freqFactors).hostF32.data() : nullptr);
    std::vector<float> freq(static_cast<size_t>(std::max(1, p.dims / 2)));
    const float mscale = kernels::ropeFrequencies(cfg, freq.data());
    for (const RopeTable& r : ropeTables_)
        if (r.key == freq && r.mscale == mscale) return &r;
    RopeTable r;
    r.params = key;
    r.key = freq;
    r.mscale = mscale;
    if (!check(cudaMalloc(&r.dev, sizeof(float) * freq.size()), "allocating RoPE frequencies").isOk()) return nullptr;
    if (!check(cudaMemcpy(r.dev, freq.data(), sizeof(float) * freq.size(), cudaMemcpyHostToDevice), "uploading RoPE frequencies").isOk())
        return nullptr;
    ropeTables_.push_back(std::move(r));
    return &ropeTables_.back();
}

void CudaBackend::rope(Tensor& x, int headDim, const IndexTensor& positions, const RopeParams& p) {
    const RopeTable* table = ropeTable(p);
    if (!table) return;
    Op op = Op::make(OpKind::Rope);
    op.p[0] = ct(x).data;
    op.p[1] = ci(positions).data;
    op.n0 = x.rows();
    op.n1 = x.cols();
    op.i0 = headDim;
    op.rope.invFreq = table->dev;
    op.rope.mscale = table->mscale;
    op.rope.dims = p.dims;
    op.rope.neox = p.neox;
    record(op);
    written(x);
}

void CudaBackend::storeKv(const Tensor& k, const Tensor& v, runtime::KvCache& kv, int layer, const KvBatch& batch) {
    Op op = Op::make(OpKind::StoreKv);
    op.p[0] = ct(k).data;
    op.p[1] = ct(v).data;
    op.p[2] = ci(*batch.positions).data;
    op.n0 = k.rows();
    op.n1 = k.cols();
    setKv(op.kv, kvDev(kv, layer, batch));
    record(op);
}

// Up to this many keys a context may be walked whole by one block of 8 warps a kv
// head, where that measured faster (attention.cu's wholePays): 256 keys are two
// 16-key chunks a warp (KESTREL_CUDA_ATTN_WHOLE=N: up to N keys, 0: never).
static int64_t wholeAttentionKeys() {
    static const int64_t keys = [] {
        const char* v = std::getenv("KESTREL_CUDA_ATTN_WHOLE");
        return v && *v ? std::max<int64_t>(0, std::atoll(v)) : int64_t{256};
    }();
    return keys;
}

int64_t CudaBackend::setKeyBound(int64_t keys) {
    wholeAttention_ = keys > 0 && keys <= wholeAttentionKeys();
    return wholeAttention_ ? 1 : 0;
}

void CudaBackend::attention(const Tensor& q, runtime::KvCache& kv, int layer, const KvBatch& batch,
                            const AttentionParams& p, Tensor& out) {
    out.setRows(q.rows());
    auto& ot = ct(out);
    cuda::AttentionDev a;
    a.heads = p.heads;
    a.kvHeads = p.kvHeads;
    a.headDim = p.headDim;
    a.scale = p.scale;
    a.slidingWindow = p.slidingWindow;
    a.softcap = p.softcap;
    // About 1024 (token, range) pairs per kv-head group: enough blocks to fill
    // the GPU for one decoding token, and for a turn of 64 tokens after a long
    // history (16 ranges each instead of 2: its attention was the serial walk
    // of 4k keys per block).
    const int64_t tokens = q.rows();
    const int64_t byContext = (kv.capacity() + 15) / 16;
    auto splitsFor = [byContext](int64_t t) {
        return static_cast<int>(std::clamp<int64_t>(std::min<int64_t>(byContext, 1024 / std::max<int64_t>(1, t)), 1, 128));
    };
    // Prefill rows (every row after the step's decode rows, when there are two or
    // more) run the tile kernel over absolute key ranges of tileKeys: a multiple of
    // 64, at least 256 keys per block, and ranges enough to cover the cache. Up to
    // 4096 (token, range) pairs: a 64-token turn after 8k of history gets 32 ranges
    // of 256 keys, i.e. 8 kv heads x 4 tiles x 32 = 1024 blocks.
    constexpr int64_t kTilePairs = 4096, kTileMinKeys = 256;
    auto tileSplitsFor = [&](int64_t t) {
        const int64_t byKeys = (kv.capacity() + kTileMinKeys - 1) / kTileMinKeys;
        return static_cast<int>(std::clamp<int64_t>(std::min<int64_t>(byKeys, kTilePairs / std::max<int64_t>(1, t)), 1, 128));
    };
    const int64_t decodeRows = std::clamp<int64_t>(decodeRows_, 0, tokens);
    a.whole = wholeAttention_;
    a.distinctRows = static_cast<int>(std::clamp<int64_t>(loneRows_, 0, decodeRows));
    if (tokens - decodeRows >= 2) {
        a.maxSplits = tileSplitsFor(tokens);
        a.tileFrom = static_cast<int>(decodeRows);
        a.tileKeys = static_cast<int>(((kv.capacity() + a.maxSplits - 1) / a.maxSplits + 63) / 64 * 64);
    } else {
        a.maxSplits = splitsFor(tokens);
    }
    // Scratch sized for every batch this output can hold (each token count: with a
    // short cache, tokens x splits is not monotonic), so its address stays put while
    // the same cache and shape are used; a larger need (another cache) reallocates.
    auto needFor = [&](int64_t t) {
        cuda::AttentionDev b = a;
        b.maxSplits = std::max(splitsFor(t), tileSplitsFor(t));
        return cuda::attentionScratchFloats(b, t);
    };
    if (!ot.attnScratch || ot.attnScratchFloats < needFor(tokens)) {
        int64_t need = 0;
        for (int64_t t = 1; t <= std::max(ot.capacityRows(), tokens); ++t) need = std::max(need, needFor(t));
        if (ot.attnScratch) {
            cudaFree(ot.attnScratch);  // synchronises: no step in flight still reads it
            clearGraphs();             // but a held graph would (replayStep does not look at the ops)
        }
        ot.attnScratch = nullptr;
        ot.attnScratchFloats = 0;
        if (!check(cudaMalloc(&ot.attnScratch, sizeof(float) * static_cast<size_t>(need)), "allocating attention scratch").isOk())
            return;
        ot.attnScratchFloats = need;
    }
    const bool q8 = p.headDim % 32 == 0 && ensureQ8(ot).isOk();
    Op op = Op::make(OpKind::Attention);
    op.p[0] = ct(q).data;
    op.p[1] = ci(*batch.positions).data;
    op.p[2] = ot.attnScratch;
    op.p[3] = ot.data;
    op.p[4] = q8 ? ot.q8 : nullptr;
    op.p[5] = q8 ? ot.q8meta : nullptr;
    op.n0 = tokens;
    setKv(op.kv, kvDev(kv, layer, batch));
    op.attn = a;
    record(op);
    ot.q8Rows = q8 ? out.rows() : -1;
}

void CudaBackend::glu(const Tensor& gate, const Tensor& up, GluKind kind, Tensor& out) {
    out.setRows(gate.rows());
    Op op = Op::make(OpKind::Glu);
    op.p[0] = ct(gate).data;
    op.p[1] = ct(up).data;
    op.p[2] = ct(out).data;
    op.n0 = gate.rows() * gate.cols();
    op.i0 = kind == GluKind::Silu ? 0 : 1;
    record(op);
    written(out);
}

void CudaBackend::add(const Tensor& a, const Tensor& b, Tensor& out) {
    out.setRows(a.rows());
    Op op = Op::make(OpKind::Add);
    op.p[0] = ct(a).data;
    op.p[1] = ct(b).data;
    op.p[2] = ct(out).data;
    op.n0 = a.rows() * a.cols();
    op.n1 = a.cols();
    record(op);
    written(out);
}

void CudaBackend::scale(Tensor& x, float s) {
    Op op = Op::make(OpKind::Scale);
    op.p[0] = ct(x).data;
    op.n0 = x.rows() * x.cols();
    op.f0 = s;
    record(op);
    written(x);
}

void CudaBackend::softcap(Tensor& x, float cap) {
    Op op = Op::make(OpKind::Softcap);
    op.p[0] = ct(x).data;
    op.n0 = x.rows() * x.cols();
    op.f0 = cap;
    record(op);
    written(x);
}

void CudaBackend::copyRows(const Tensor& src, int64_t srcRow, int64_t count, Tensor& dst) {
    dst.setRows(count);
    Op op = Op::make(OpKind::CopyRows);
    op.p[0] = ct(dst).data;
    op.p[1] = ct(src).data + srcRow * src.cols();
    op.n0 = static_cast<int64_t>(sizeof(float)) * count * src.cols();
    record(op);
    written(dst);
}

}  // namespace kestrel::backend::cudaimpl
