// Shared helpers of the model suites: loading a model from a QString path through
// the public contract; the checks against the NumPy reference are
// tests/common/reference_check.h.
#pragma once

#include "cpu_backend.h"
#include "reference_check.h"

#include <QString>

#include <memory>

namespace kestrel::test {

inline Result<std::shared_ptr<model::LoadedModel>> loadModel(const QString& path, backend::Backend& be) {
    return loadModelFile(path.toStdString(), be);
}

}  // namespace kestrel::test
