// kestrel::Model: loading a GGUF file onto a backend, and its tokenizer.
#include "cpu_backend.h"
#ifdef KESTREL_HAVE_CUDA
#include "cuda_backend.h"
#endif
#include "model_impl.h"

#include <algorithm>
#include <thread>

namespace kestrel {

Result<std::unique_ptr<backend::Backend>> createBackend(const std::string& device, int threads) {
    if (device.empty() || device == "cpu") {
        if (threads < 0) return Status(ErrorCode::InvalidArgument, "threads must be >= 0, got " + std::to_string(threads));
        return std::unique_ptr<backend::Backend>(std::make_unique<backend::CpuBackend>(threads));
    }
    if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
#ifdef KESTREL_HAVE_CUDA
        auto index = backend::parseCudaDevice(device);
        if (!index) return index.status();
        return backend::createCudaBackend(index.value());
#else
        return Status(ErrorCode::Unsupported, "device '" + device + "': this build of Kestrel has no CUDA backend (built without CUDA); use --device cpu");
#endif
    }
    return Status(ErrorCode::InvalidArgument, "unknown device '" + device + "' (expected cpu, cuda or cuda:N)");
}

namespace {

// The pool's size: the setting, or a share of free memory (see LoadOptions).
Result<runtime::KvPoolOptions> kvPoolOptionsFor(const LoadOptions& load, const model::ModelConfig& c,
                                                const backend::Backend& be) {
    runtime::KvPoolOptions o;
    o.modelPath = load.path;
    const int64_t trained = c.contextLength > 0 ? c.contextLength : 4096;
    const bool gpu = be.name().rfind("cuda", 0) == 0;
    // 8-bit rows need a head size that is a multiple of the scale block, and the CPU's kernels.
    o.storage = load.kvPrecision == KvPrecision::Int8 && !gpu && c.headDim % runtime::kKvQ8Block == 0
                    ? runtime::KvStorage::Q8
                    : runtime::KvStorage::F16;
    const auto perToken = static_cast<double>(model::kvCacheSpecFor(c, 1, o.storage).bytesPerToken());
    if (load.kvPoolTokens < 0) return Status(ErrorCode::InvalidArgument, "kvPoolTokens must be >= 0");
    if (load.kvPoolTokens > 0) {
        o.tokens = load.kvPoolTokens;
    } else {
        const int64_t cap = gpu ? 65536 : 32768;
        const int64_t byMemory = static_cast<int64_t>(static_cast<double>(be.availableMemoryBytes()) * 0.4 / perToken);
        o.tokens = std::max<int64_t>(std::min({std::max<int64_t>(trained, 16384), cap, byMemory}), 4096);
    }
    o.maxPositions = std::min(trained, o.tokens);
    return o;
}

}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

Result<std::shared_ptr<Model>> Model::load(const LoadOptions& options) {
    auto impl = std::make_unique<Impl>();
    if (options.onProgress && !options.onProgress(0.0f)) return Status(ErrorCode::Cancelled, "loading cancelled");

    auto file = gguf::GgufFile::open(options.path);
    if (!file) return file.status();
    impl->file = std::shared_ptr<gguf::GgufFile>(std::move(file).value());

    auto backend = createBackend(options.device, options.threads);
    if (!backend) return backend.status();
    impl->backend = std::move(backend).value();

    auto loaded = model::LoadedModel::load(impl->file, *impl->backend, options.onProgress);
    if (!loaded) return loaded.status();
    impl->loaded = std::move(loaded).value();

    auto tokenizer = Tokenizer::fromGguf(*impl->file);
    if (tokenizer) {
        impl->tokenizer = std::move(tokenizer).value();
    } else if (tokenizer.status().code() == ErrorCode::Unsupported || tokenizer.status().code() == ErrorCode::NotFound) {
        // The weights still run on token ids (benchmarks, tests); text needs a supported vocabulary.
        impl->tokenizerStatus = tokenizer.status();
    } else {
        return tokenizer.status();
    }
    if (impl->tokenizer && impl->tokenizer->vocabSize() != impl->loaded->config().vocabSize) {
        return Status(ErrorCode::InvalidFile,
                      impl->file->where() + "the vocabulary has " + std::to_string(impl->tokenizer->vocabSize()) +
                          " tokens but the model's output has " + std::to_string(impl->loaded->config().vocabSize));
    }
    impl->info = describeModel(*impl->file, impl->loaded->config(), impl->backend->name());
    impl->info.peakBandwidthGBs = impl->backend->peakBandwidthGBs();

    auto poolOptions = kvPoolOptionsFor(options, impl->loaded->config(), *impl->backend);
    if (!poolOptions) return poolOptions.status();
    auto pool = runtime::KvPool::create(impl->loaded, *impl->backend, poolOptions.value());
    if (!pool) return pool.status();
    impl->pool = std::move(pool).value();
    impl->info.kvPrecision = poolOptions->storage == runtime::KvStorage::Q8 ? KvPrecision::Int8 : KvPrecision::Half;
    impl->info.kvBytesPerToken = model::kvCacheSpecFor(impl->loaded->config(), 1, poolOptions->storage).bytesPerToken();
    if (!options.snapshotDir.empty())
        impl->snapshots = std::make_unique<runtime::SnapshotStore>(options.snapshotDir, options.snapshotMaxBytes);
    if (options.onProgress) options.onProgress(1.0f);
    return std::shared_ptr<Model>(new Model(std::move(impl)));
}

const ModelInfo& Model::info() const { return impl_->info; }

void Model::clearPrefixCache() const { impl_->pool->clearCache(); }

std::vector<TokenId> Model::tokenize(std::string_view text, bool addSpecial, bool parseSpecial) const {
    if (!impl_->tokenizer) return {};
    return impl_->tokenizer->encode(text, addSpecial, parseSpecial);
}

std::string Model::detokenize(std::span<const TokenId> tokens, bool renderSpecial) const {
    if (!impl_->tokenizer) return {};
    return impl_->tokenizer->decode(tokens, renderSpecial);
}

std::string Model::tokenText(TokenId token) const {
    if (!impl_->tokenizer || token < 0 || token >= impl_->tokenizer->vocabSize()) return {};
    return std::string(impl_->tokenizer->tokenText(token));
}

bool Model::isEndOfGeneration(TokenId token) const {
    if (impl_->tokenizer) return impl_->tokenizer->isEndOfGeneration(token);
    return false;
}

std::optional<TokenId> Model::findToken(std::string_view text) const {
    if (!impl_->tokenizer) return std::nullopt;
    return impl_->tokenizer->findToken(text);
}

const char* kvPrecisionName(KvPrecision precision) { return precision == KvPrecision::Int8 ? "int8" : "f16"; }

const char* stopReasonName(StopReason reason) {
    switch (reason) {
    case StopReason::EndOfGeneration: return "end of generation";
    case StopReason::MaxTokens: return "max tokens";
    case StopReason::StopString: return "stop string";
    case StopReason::ContextFull: return "context full";
    case StopReason::Cancelled: return "cancelled";
    case StopReason::Callback: return "stopped by caller";
    }
    return "unknown";
}

}  // namespace kestrel
