#include "loaded_model.h"

#include <sstream>

namespace kestrel::model {
namespace {

std::string shapeString(const std::vector<uint64_t>& dims) {
    std::ostringstream s;
    s << '[';
    for (size_t i = 0; i < dims.size(); ++i) s << (i ? ", " : "") << dims[i];
    s << ']';
    return s.str();
}

}  // namespace

Result<std::shared_ptr<LoadedModel>> LoadedModel::load(std::shared_ptr<gguf::GgufFile> file, backend::Backend& be,
                                                       const std::function<bool(float)>& progress) {
    if (!file) return Status(ErrorCode::InvalidArgument, "no model file");
    const gguf::GgufFile& f = *file;
    if (!f.find("general.architecture"))
        return Status(ErrorCode::InvalidFile, f.where() + "missing key 'general.architecture'");
    auto archName = f.getString("general.architecture");
    if (!archName) return archName.status();
    const ArchSpec* arch = findArch(archName.value());
    if (!arch)
        return Status(ErrorCode::Unsupported, f.where() + "architecture '" + archName.value() +
                                                  "' is not supported (supported: " + supportedArchNames() + ")");

    auto model = std::shared_ptr<LoadedModel>(new LoadedModel());
    model->file_ = file;
    model->backend_ = &be;
    model->arch_ = arch;
    auto cfg = readCommonConfig(f, arch->name.data());
    if (!cfg) return cfg.status();
    model->config_ = std::move(cfg).value();
    KESTREL_RETURN_IF_ERROR(arch->configure(ConfigReader(f, model->config_.arch), model->config_));
    KESTREL_RETURN_IF_ERROR(validateConfig(f, model->config_));

    std::vector<TensorSpec> specs;
    arch->tensors(model->config_, model->weights_, specs);
    // Check everything before uploading anything: a bad file fails fast and whole.
    for (const TensorSpec& spec : specs) {
        const gguf::TensorInfo* info = f.findTensor(spec.name);
        if (!info) {
            if (!spec.required) continue;
            return Status(ErrorCode::InvalidFile, f.where() + "missing tensor '" + spec.name +
                                                      "' (required by architecture " + model->config_.arch + ")");
        }
        if (info->dims != spec.dims)
            return Status(ErrorCode::InvalidFile, f.where() + "tensor '" + spec.name + "' has shape " +
                                                      shapeString(info->dims) + ", expected " + shapeString(spec.dims));
        const auto traits = ggmlTypeTraits(info->type);
        if (!traits || !traits->computeSupported)
            return Status(ErrorCode::Unsupported, f.where() + "tensor '" + spec.name + "' has type " +
                                                      std::string(ggmlTypeName(info->type)) +
                                                      ", which Kestrel cannot compute with");
        // Norm gammas, biases and rope factors are read as plain floats by every backend.
        if (spec.dims.size() == 1 && info->type != GgmlType::F32)
            return Status(ErrorCode::Unsupported, f.where() + "tensor '" + spec.name + "' has type " +
                                                      std::string(ggmlTypeName(info->type)) +
                                                      ", expected F32 for a norm, bias or rope vector");
    }
    for (size_t i = 0; i < specs.size(); ++i) {
        const TensorSpec& spec = specs[i];
        const gguf::TensorInfo* info = f.findTensor(spec.name);
        if (!info) continue;
        auto w = be.uploadWeight(*info);
        if (!w) return Status(w.status().code(), f.where() + w.status().message());
        *spec.slot = w.value().get();
        model->owned_.push_back(std::move(w).value());
        if (progress && !progress(static_cast<float>(i + 1) / static_cast<float>(specs.size())))
            return Status(ErrorCode::Cancelled, f.where() + "loading cancelled");
    }
    if (!model->weights_.output) {
        model->weights_.output = model->weights_.tokenEmbd;
        model->config_.tiedEmbeddings = true;
    }
    return model;
}

}  // namespace kestrel::model
