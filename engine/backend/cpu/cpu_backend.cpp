#include "cpu_backend.h"

#include "matmul.h"
#include "ops.h"
#include "rope_config.h"
#include "weight_arena.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace kestrel::backend {
namespace {

// The file pages of a tensor that now lives repacked: dropped from this
// process (the model file is mapped read-only and private, so a later read
// would fault them in again from the file) so that a loaded model does not
// count twice against the machine's memory. Only whole pages inside the range,
// and only for GgufFile's mapping: on memory a caller owns, DONTNEED zeroes it
// (the CUDA checks, which upload the same bytes to both backends, read zeros).
void releaseMappedPages(const void* data, size_t bytes) {
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
    const auto end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// A weight's bytes: the model file's (mapped, no copy), or for the types the
// decode GEMV reads faster in the lanes layout, a copy repacked at load.
class CpuWeight final : public Weight {
public:
    CpuWeight(const gguf::TensorInfo& info, size_t rowBytes)
        : Weight(info.name, info.type, static_cast<int64_t>(info.rows()), static_cast<int64_t>(info.rowLength())),
          matrix_{type(), info.data, rows(), cols(), rowBytes}, fileMapped_(info.fileMapped) {}
    int device() const override { return -1; }
    const kernels::WeightMatrix& matrix() const { return matrix_; }
    const float* f32() const { return static_cast<const float*>(matrix_.data); }

    Status repackForDecode(WeightArena& arena, kernels::ThreadPool& pool) {
        const size_t bytes = kernels::lanesLayoutBytes(matrix_);
        WeightArena::Block block = arena.allocate(bytes);
        if (!block.data)
            return Status(ErrorCode::OutOfMemory, "not enough memory to load tensor '" + name() + "' (" +
                                                      std::to_string((bytes >> 20) + 1) + " MiB)");
        const kernels::WeightMatrix mapped = matrix_;
        matrix_ = kernels::repackForDecode(matrix_, block.data, pool);
        repacked_ = std::move(block.keepAlive);
        if (fileMapped_) releaseMappedPages(mapped.data, static_cast<size_t>(mapped.rows) * mapped.rowBytes);
        return Status::ok();
    }

private:
    kernels::WeightMatrix matrix_;
    std::shared_ptr<void> repacked_;  // the arena chunk holding the repacked rows
    bool fileMapped_;                 // the original rows may be dropped once repacked
};

class CpuTensor final : public Tensor {
public:
    CpuTensor(int64_t capacity, int64_t cols) : Tensor(capacity, cols), data_(static_cast<size_t>(capacity * cols)) {}
    int device() const override { return -1; }
    std::vector<float> data_;
};

class CpuIndexTensor final : public IndexTensor {
public:
    explicit CpuIndexTensor(int64_t capacity) : IndexTensor(capacity), data_(static_cast<size_t>(capacity)) {}
    int device() const override { return -1; }
    std::vector<int32_t> data_;
};

const CpuWeight& cw(const Weight& w) { return static_cast<const CpuWeight&>(w); }
CpuTensor& ct(Tensor& t) { return static_cast<CpuTensor&>(t); }
const CpuTensor& ct(const Tensor& t) { return static_cast<const CpuTensor&>(t); }
const int32_t* ids(const IndexTensor& t) { return static_cast<const CpuIndexTensor&>(t).data_.data(); }

static_assert(runtime::kKvQ8Block == kernels::kKvQ8Block, "the cache's and the kernels' 8-bit blocks agree");

kernels::KvView kvView(runtime::KvCache& kv, int layer, const KvBatch& batch) {
    const runtime::KvLayer l = kv.layer(layer);
    kernels::KvView view;
    switch (kv.spec().storage) {
        case runtime::KvStorage::F32: view.type = kernels::KvType::F32; break;
        case runtime::KvStorage::F16: view.type = kernels::KvType::F16; break;
        case runtime::KvStorage::Q8: view.type = kernels::KvType::Q8; break;
    }
    view.k = l.k;
    view.v = l.v;
    view.kScales = l.kScales;
    view.vScales = l.vScales;
    view.rowStride = l.rowStride;
    view.blockTokens = l.blockTokens;
    view.tables = ids(*batch.tables);
    view.seqRows = batch.seqRows ? ids(*batch.seqRows) : nullptr;
    view.tableWidth = batch.tableWidth;
    return view;
}

// The rows of a shared product's weights together (for the op profile).
int64_t sharedRows(std::span<const Backend::MatmulTarget> targets) {
    int64_t rows = 0;
    for (const Backend::MatmulTarget& t : targets) rows += t.w->rows();
    return rows;
}

}  // namespace

CpuBackend::CpuBackend(int threads, MatmulMode mode)
    : pool_(std::make_unique<kernels::ThreadPool>(threads)), arena_(std::make_unique<WeightArena>()), matmulMode_(mode) {}
CpuBackend::~CpuBackend() = default;

std::string CpuBackend::name() const { return "cpu (" + std::string(kernels::activeIsa()) + ")"; }
uint64_t CpuBackend::availableMemoryBytes() const {
    const long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(size) : 0;
}

int CpuBackend::threads() const { return pool_->size(); }

float* CpuBackend::data(Tensor& t) { return ct(t).data_.data(); }
const float* CpuBackend::data(const Tensor& t) { return ct(t).data_.data(); }

Result<std::unique_ptr<Weight>> CpuBackend::uploadWeight(const gguf::TensorInfo& info) {
    const auto traits = ggmlTypeTraits(info.type);
    if (!traits || !traits->computeSupported)
        return Status(ErrorCode::Unsupported, "tensor '" + info.name + "' has type " +
                                                  std::string(ggmlTypeName(info.type)) +
                                                  ", which the CPU backend cannot compute with");
    const auto rowBytes = ggmlRowBytes(info.type, info.rowLength());
    if (!rowBytes || !info.data)
        return Status(ErrorCode::InvalidFile, "tensor '" + info.name + "': rows are not whole blocks of its type");
    auto weight = std::make_unique<CpuWeight>(info, *rowBytes);
    if (info.rows() > 1 && kernels::lanesLayoutAvailable(info.type))
        KESTREL_RETURN_IF_ERROR(weight->repackForDecode(*arena_, *pool_));
    return std::unique_ptr<Weight>(std::move(weight));
}

Result<std::unique_ptr<Tensor>> CpuBackend::createTensor(int64_t capacityRows, int64_t cols) {
    if (capacityRows <= 0 || cols <= 0) return Status(ErrorCode::InvalidArgument, "tensor size must be positive");
    return std::unique_ptr<Tensor>(std::make_unique<CpuTensor>(capacityRows, cols));
}

Result<std::unique_ptr<IndexTensor>> CpuBackend::createIndexTensor(int64_t capacity) {
    if (capacity <= 0) return Status(ErrorCode::InvalidArgument, "index tensor size must be positive");
    return std::unique_ptr<IndexTensor>(std::make_unique<CpuIndexTensor>(capacity));
}

Result<std::unique_ptr<runtime::KvCache>> CpuBackend::createKvCache(const runtime::KvCacheSpec& spec) {
    auto cache = runtime::ContiguousKvCache::create(spec);
    if (!cache) return cache.status();
    return std::unique_ptr<runtime::KvCache>(std::move(cache).value());
}

Status CpuBackend::upload(IndexTensor& dst, std::span<const int32_t> values) {
    if (static_cast<int64_t>(values.size()) > dst.capacity())
        return Status(ErrorCode::InvalidArgument, "index upload larger than its tensor");
    std::memcpy(static_cast<CpuIndexTensor&>(dst).data_.data(), values.data(), values.size_bytes());
    setIndexSize(dst, static_cast<int64_t>(values.size()));
    return Status::ok();
}

Status CpuBackend::upload(Tensor& dst, std::span<const float> values) {
    if (static_cast<int64_t>(values.size()) != dst.rows() * dst.cols())
        return Status(ErrorCode::InvalidArgument, "tensor upload size does not match rows * cols");
    std::memcpy(data(dst), values.data(), values.size_bytes());
    return Status::ok();
}

Status CpuBackend::download(const Tensor& src, std::span<float> out) {
    if (static_cast<int64_t>(out.size()) != src.rows() * src.cols())
        return Status(ErrorCode::InvalidArgument, "tensor download size does not match rows * cols");
    std::memcpy(out.data(), data(src), out.size_bytes());
    return Status::ok();
}

Status CpuBackend::downloadTop(const Tensor& src, int32_t k, std::span<TopLogit> out) {
    const auto timing = timed("top-k", src.rows());
    KESTREL_RETURN_IF_ERROR(checkTopArgs(src, k, out.size()));
    const int64_t cols = src.cols();
    const float* rows = data(src);
    // The base class copies the rows out and selects on one thread; a 4-stream decode step spent ~3 % of
    // the caller's time there (perf), while the worker waited.
    pool_->parallelFor(src.rows(), [&](int64_t begin, int64_t end, int) {
        for (int64_t r = begin; r < end; ++r) {
            const float* row = rows + r * cols;
            if (k == 1) {
                const int64_t best = kernels::argmaxRow(row, cols);
                out[static_cast<size_t>(r)] = {row[best], static_cast<int32_t>(best)};
            } else {
                selectTop(std::span<const float>(row, static_cast<size_t>(cols)), k,
                          out.subspan(static_cast<size_t>(r * k), static_cast<size_t>(k)));
            }
        }
    });
    return Status::ok();
}

void CpuBackend::embed(const Weight& table, const IndexTensor& idx, Tensor& out) {
    const auto timing = timed("embed", idx.size());
    const kernels::WeightMatrix& w = cw(table).matrix();
    out.setRows(idx.size());
    const int32_t* id = ids(idx);
    for (int64_t t = 0; t < idx.size(); ++t) kernels::weightRowToFloat(w, id[t], data(out) + t * out.cols());
}

void CpuBackend::matmulShared(const Tensor& x, std::span<const MatmulTarget> targets) {
    // Only whole decode batches share: mixed steps keep decode and prefill rows apart (see matmul).
    if (matmulMode_ != MatmulMode::Fast || decodeRows_ < x.rows() || targets.size() > kernels::kMaxSharedProducts) {
        Backend::matmulShared(x, targets);
        return;
    }
    const auto timing = timed("matmulShared", x.rows(), sharedRows(targets), x.cols());
    kernels::SharedProduct products[kernels::kMaxSharedProducts];
    for (size_t i = 0; i < targets.size(); ++i) {
        targets[i].y->setRows(x.rows());
        products[i] = {&cw(*targets[i].w).matrix(), data(*targets[i].y)};
    }
    kernels::matmulDecodeShared({products, targets.size()}, data(x), x.rows(), *pool_);
}

void CpuBackend::matmul(const Weight& w, const Tensor& x, Tensor& y) {
    const auto timing = timed("matmul", x.rows(), w.rows(), w.cols());
    y.setRows(x.rows());
    switch (matmulMode_) {
    case MatmulMode::Fast: {
        // Decode rows first, on their own: their results then do not depend on the prefill rows beside them.
        const kernels::WeightMatrix& m = cw(w).matrix();
        const int64_t decode = std::min(decodeRows_, x.rows());
        if (decode > 0) kernels::matmulDecode(m, data(x), decode, data(y), *pool_);
        if (x.rows() > decode)
            kernels::matmul(m, data(x) + decode * x.cols(), x.rows() - decode, data(y) + decode * y.cols(), *pool_);
        break;
    }
    case MatmulMode::FloatActivations:
        kernels::matmulFloatActivations(cw(w).matrix(), data(x), x.rows(), data(y), *pool_);
        break;
    case MatmulMode::Reference: kernels::matmulReference(cw(w).matrix(), data(x), x.rows(), data(y)); break;
    }
}

void CpuBackend::addBias(Tensor& x, const Weight& bias) {
    const auto timing = timed("addBias", x.rows());
    kernels::addBias(data(x), cw(bias).f32(), x.rows(), x.cols());
}

void CpuBackend::rmsNorm(const Tensor& x, const Weight& gamma, float eps, Tensor& y, int groupSize) {
    const auto timing = timed("rmsNorm", x.rows());
    y.setRows(x.rows());
    kernels::rmsNorm(data(x), cw(gamma).f32(), eps, data(y), x.rows(), x.cols(), groupSize, *pool_);
}

void CpuBackend::rope(Tensor& x, int headDim, const IndexTensor& positions, const RopeParams& p) {
    const auto timing = timed("rope", x.rows());
    RopeEntry& e = ropeEntry(p);
    if (!e.angles.holds(ids(positions), x.rows(), e.invFreq.data(), p.dims / 2, e.mscale))
        e.angles.fill(ids(positions), x.rows(), e.invFreq.data(), p.dims / 2, e.mscale);
    kernels::rope(data(x), x.rows(), x.cols(), headDim, e.angles, p.neox, *pool_);
}

CpuBackend::RopeEntry& CpuBackend::ropeEntry(const RopeParams& p) {
    for (RopeEntry& e : rope_)
        if (e.valid && e.params == p) return e;
    RopeEntry& e = rope_[ropeNext_];
    ropeNext_ = (ropeNext_ + 1) % rope_.size();
    const kernels::RopeConfig cfg = ropeConfigOf(p, p.freqFactors ? cw(*p.freqFactors).f32() : nullptr);
    e.mscale = kernels::ropeFrequencies(cfg, e.invFreq.data());
    e.params = p;
    e.valid = true;
    e.angles = {};
    return e;
}

void CpuBackend::storeKv(const Tensor& k, const Tensor& v, runtime::KvCache& kv, int layer, const KvBatch& batch) {
    const auto timing = timed("storeKv", k.rows());
    kernels::storeKv(data(k), data(v), k.rows(), ids(*batch.positions), k.cols(), kvView(kv, layer, batch));
}

void CpuBackend::attention(const Tensor& q, runtime::KvCache& kv, int layer, const KvBatch& batch,
                           const AttentionParams& p, Tensor& out) {
    const auto timing = timed("attention", q.rows());
    kernels::AttentionConfig cfg{p.heads, p.kvHeads, p.headDim, p.headDim, p.scale, p.slidingWindow, p.softcap};
    out.setRows(q.rows());
    // The step's decode rows take the per-query kernels, its prefill rows the query blocks
    // (kernels::attention): by role, so a sequence's tokens come out the same in any batch.
    kernels::attention(data(q), q.rows(), ids(*batch.positions), kvView(kv, layer, batch), cfg, data(out), *pool_,
                       decodeRows_);
}

Status CpuBackend::copyKvBlock(runtime::KvCache& kv, int32_t srcBlock, int32_t dstBlock) {
    const auto& spec = kv.spec();
    KESTREL_RETURN_IF_ERROR(runtime::validateKvBlockCopy(spec, srcBlock, dstBlock));
    runtime::forEachKvBlockCopy(spec, srcBlock, dstBlock, [&](int layer, bool isV, size_t src, size_t dst, size_t n) {
        const runtime::KvLayer l = kv.layer(layer);
        auto* base = static_cast<uint8_t*>(isV ? l.v : l.k);
        std::memcpy(base + dst, base + src, n);
    });
    return Status::ok();
}

Status CpuBackend::readKv(runtime::KvCache& kv, std::span<const int32_t> table, int64_t tokens, std::span<uint8_t> out) {
    KESTREL_RETURN_IF_ERROR(runtime::validateKvTransfer(kv.spec(), table, tokens, out.size()));
    runtime::forEachKvRun(kv.spec(), table.data(), tokens, [&](int layer, bool isV, size_t src, size_t dst, size_t n) {
        const runtime::KvLayer l = kv.layer(layer);
        std::memcpy(out.data() + dst, static_cast<const uint8_t*>(isV ? l.v : l.k) + src, n);
    });
    return Status::ok();
}

Status CpuBackend::writeKv(runtime::KvCache& kv, std::span<const int32_t> table, int64_t tokens,
                           std::span<const uint8_t> in) {
    KESTREL_RETURN_IF_ERROR(runtime::validateKvTransfer(kv.spec(), table, tokens, in.size()));
    runtime::forEachKvRun(kv.spec(), table.data(), tokens, [&](int layer, bool isV, size_t dst, size_t src, size_t n) {
        const runtime::KvLayer l = kv.layer(layer);
        std::memcpy(static_cast<uint8_t*>(isV ? l.v : l.k) + dst, in.data() + src, n);
    });
    return Status::ok();
}

void CpuBackend::glu(const Tensor& gate, const Tensor& up, GluKind kind, Tensor& out) {
    const auto timing = timed("glu", gate.rows());
    out.setRows(gate.rows());
    kernels::glu(data(gate), data(up), data(out), gate.rows() * gate.cols(),
                 kind == GluKind::Silu ? kernels::GluKind::Silu : kernels::GluKind::GeluTanh, *pool_);
}

void CpuBackend::add(const Tensor& a, const Tensor& b, Tensor& out) {
    const auto timing = timed("add", a.rows());
    out.setRows(a.rows());
    kernels::add(data(a), data(b), data(out), a.rows() * a.cols());
}

void CpuBackend::scale(Tensor& x, float s) {
    const auto timing = timed("scale", x.rows());
    kernels::scale(data(x), s, data(x), x.rows() * x.cols());
}

void CpuBackend::softcap(Tensor& x, float cap) {
    const auto timing = timed("softcap", x.rows());
    kernels::softcap(data(x), x.rows() * x.cols(), cap);
}

void CpuBackend::copyRows(const Tensor& src, int64_t srcRow, int64_t count, Tensor& dst) {
    const auto timing = timed("copyRows", count);
    dst.setRows(count);
    std::memcpy(data(dst), data(src) + srcRow * src.cols(), sizeof(float) * static_cast<size_t>(count * src.cols()));
}

}  // namespace kestrel::backend
