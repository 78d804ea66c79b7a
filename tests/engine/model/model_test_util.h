// Shared helpers of the model suites: loading through the public contract,
// reading the NumPy reference's outputs, comparing logits.
#pragma once

#include "cpu_backend.h"
#include "gguf_file.h"
#include "loaded_model.h"
#include "model_runner.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace kestrel::test {

inline Result<std::shared_ptr<model::LoadedModel>> loadModel(const QString& path, backend::Backend& be) {
    auto file = gguf::GgufFile::open(path.toStdString());
    if (!file) return file.status();
    return model::LoadedModel::load(std::shared_ptr<gguf::GgufFile>(std::move(file).value()), be);
}

inline std::vector<float> readF32(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QByteArray b = f.readAll();
    std::vector<float> v(static_cast<size_t>(b.size()) / 4);
    std::memcpy(v.data(), b.constData(), v.size() * 4);
    return v;
}

inline QJsonObject readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

inline std::vector<int32_t> intsOf(const QJsonValue& v) {
    std::vector<int32_t> out;
    for (const QJsonValue& x : v.toArray()) out.push_back(x.toInt());
    return out;
}

inline std::vector<double> doublesOf(const QJsonValue& v) {
    std::vector<double> out;
    for (const QJsonValue& x : v.toArray()) out.push_back(x.toDouble());
    return out;
}

// max |a - ref| / max |ref|
inline double normalisedError(const float* a, const float* ref, size_t n) {
    double d = 0, m = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!std::isfinite(a[i])) return INFINITY;
        d = std::max(d, std::abs(double(a[i]) - ref[i]));
        m = std::max(m, std::abs(double(ref[i])));
    }
    return m > 0 ? d / m : d;
}

inline int argmax(const float* v, int n) { return int(std::max_element(v, v + n) - v); }

}  // namespace kestrel::test
