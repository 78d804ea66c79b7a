// Shared helpers of the model suites (Qt flavoured): loading through the public
// contract, reading the NumPy reference's outputs; the Qt-free core is
// tests/common/reference_check.h.
#pragma once

#include "cpu_backend.h"
#include "reference_check.h"  // loadModelFile, readF32File, normalisedError, argmax

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
    return loadModelFile(path.toStdString(), be);
}

inline std::vector<float> readF32(const QString& path) { return readF32File(path.toStdString()); }

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

}  // namespace kestrel::test
