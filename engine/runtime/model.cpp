// kestrel::Model: loading a GGUF file onto a backend, and its tokenizer.
#include "cpu_backend.h"
#ifdef KESTREL_HAVE_CUDA
#include "cuda_backend.h"
#endif
#include "model_impl.h"

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
    } else if (tokenizer.status().code() == ErrorCode::Unsupported) {
        // The weights still run (benchmarks, token-id tests); text needs the vocabulary support.
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
    if (options.onProgress) options.onProgress(1.0f);
    return std::shared_ptr<Model>(new Model(std::move(impl)));
}

const ModelInfo& Model::info() const { return impl_->info; }

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
