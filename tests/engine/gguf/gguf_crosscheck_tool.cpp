// gguf_crosscheck_tool: the C++ side of tests/reference/gguf_crosscheck.py.
//
//   gguf_crosscheck_tool dump IN.gguf OUT.json   read with GgufFile, describe as JSON
//   gguf_crosscheck_tool write SPEC.json OUT.gguf write SPEC with GgufWriter
//
// JSON values are {"type": "uint8", "value": ...}; integers travel as decimal
// strings (JSON numbers are doubles and would lose 64-bit values), floats as
// numbers, arrays as {"type": "array", "element": T, "value": [values]}.
// Tensors are {"name", "type" ("Q8_0"), "dims" (ggml order), "data_hex"}.
// Qt is used only for JSON and file I/O; the code under test is the engine's.
#include "gguf_file.h"
#include "gguf_writer.h"

#include <QByteArray>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>

using namespace kestrel;
using namespace kestrel::gguf;

namespace {

QJsonObject encode(const Value& v) {
    QJsonObject o;
    o["type"] = QString::fromStdString(valueTypeName(v.type));
    if (const Array* a = v.asArray()) {
        QJsonArray items;
        for (const Value& item : a->items) items.append(encode(item));
        o["element"] = QString::fromStdString(valueTypeName(a->elementType));
        o["value"] = items;
    } else if (const std::string* s = v.asString()) {
        o["value"] = QString::fromUtf8(s->data(), qsizetype(s->size()));
    } else if (auto b = v.asBool()) {
        o["value"] = *b;
    } else if (v.isInteger()) {
        o["value"] = QString::fromStdString(std::holds_alternative<uint64_t>(v.data)
                                                ? std::to_string(std::get<uint64_t>(v.data))
                                                : std::to_string(std::get<int64_t>(v.data)));
    } else {
        o["value"] = *v.asDouble();
    }
    return o;
}

bool typeFromName(const QString& name, ValueType& out) {
    for (uint32_t id = 0; isKnownValueType(id); ++id)
        if (name.toStdString() == valueTypeName(ValueType(id))) {
            out = ValueType(id);
            return true;
        }
    return false;
}

bool decode(const QJsonObject& o, Value& out, std::string& err) {
    if (!typeFromName(o["type"].toString(), out.type)) {
        err = "unknown type " + o["type"].toString().toStdString();
        return false;
    }
    const QJsonValue v = o["value"];
    switch (out.type) {
    case ValueType::Array: {
        Array a;
        if (!typeFromName(o["element"].toString(), a.elementType)) {
            err = "unknown element type";
            return false;
        }
        for (const QJsonValue item : v.toArray()) {
            Value x;
            if (!decode(item.toObject(), x, err)) return false;
            a.items.push_back(std::move(x));
        }
        out.data = std::move(a);
        return true;
    }
    case ValueType::String: out.data = v.toString().toStdString(); return true;
    case ValueType::Bool: out.data = v.toBool(); return true;
    case ValueType::Float32: case ValueType::Float64: out.data = v.toDouble(); return true;
    case ValueType::Int8: case ValueType::Int16: case ValueType::Int32: case ValueType::Int64:
        out.data = int64_t(std::stoll(v.toString().toStdString()));
        return true;
    default:
        out.data = uint64_t(std::stoull(v.toString().toStdString()));
        return true;
    }
}

std::optional<GgmlType> ggmlTypeFromName(const QString& name) {
    for (uint32_t id = 0; id < 64; ++id)
        if (auto t = ggmlTypeTraits(id); t && QString::fromUtf8(t->name.data(), qsizetype(t->name.size())) == name)
            return t->type;
    return std::nullopt;
}

int dump(const char* in, const char* out) {
    auto r = GgufFile::open(in);
    if (!r.isOk()) {
        std::fprintf(stderr, "%s\n", r.status().toString().c_str());
        return 1;
    }
    const GgufFile& f = **r;
    QJsonObject meta;
    for (const auto& [key, value] : f.metadata()) meta[QString::fromStdString(key)] = encode(value);
    QJsonArray tensors;
    for (const TensorInfo& t : f.tensors()) {
        QJsonObject o;
        o["name"] = QString::fromStdString(t.name);
        o["type"] = QString::fromUtf8(ggmlTypeName(t.type).data());
        QJsonArray dims;
        for (uint64_t d : t.dims) dims.append(QString::number(d));
        o["dims"] = dims;
        o["offset"] = QString::number(t.offset);
        o["data_hex"] = QString::fromLatin1(
            QByteArray(reinterpret_cast<const char*>(t.data), qsizetype(t.bytes)).toHex());
        tensors.append(o);
    }
    QJsonObject root;
    root["version"] = int(f.version());
    root["alignment"] = QString::number(f.alignment());
    root["data_offset"] = QString::number(f.dataOffset());
    root["metadata"] = meta;
    root["tensors"] = tensors;
    QFile o(out);
    if (!o.open(QIODevice::WriteOnly)) return 1;
    o.write(QJsonDocument(root).toJson());
    return 0;
}

int write(const char* specPath, const char* out) {
    QFile in(specPath);
    if (!in.open(QIODevice::ReadOnly)) return 1;
    const QJsonObject spec = QJsonDocument::fromJson(in.readAll()).object();
    GgufWriter w(spec["alignment"].toString().toULongLong());
    for (const QJsonValue kv : spec["metadata"].toArray()) {  // [key, value] pairs keep the order
        const QJsonArray pair = kv.toArray();
        Value v;
        std::string err;
        if (!decode(pair[1].toObject(), v, err)) {
            std::fprintf(stderr, "spec key %s: %s\n", qPrintable(pair[0].toString()), err.c_str());
            return 1;
        }
        w.set(pair[0].toString().toStdString(), std::move(v));
    }
    for (const QJsonValue tv : spec["tensors"].toArray()) {
        const QJsonObject t = tv.toObject();
        const auto type = ggmlTypeFromName(t["type"].toString());
        if (!type) return 1;
        std::vector<uint64_t> dims;
        for (const QJsonValue d : t["dims"].toArray()) dims.push_back(uint64_t(d.toInteger()));
        const QByteArray data = QByteArray::fromHex(t["data_hex"].toString().toLatin1());
        const Status st = w.addTensor(t["name"].toString().toStdString(), *type, dims,
                                      std::span(reinterpret_cast<const uint8_t*>(data.constData()), size_t(data.size())));
        if (!st.isOk()) {
            std::fprintf(stderr, "%s\n", st.toString().c_str());
            return 1;
        }
    }
    const Status st = w.write(out);
    if (!st.isOk()) {
        std::fprintf(stderr, "%s\n", st.toString().c_str());
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::string(argv[1]) == "dump") return dump(argv[2], argv[3]);
    if (argc == 4 && std::string(argv[1]) == "write") return write(argv[2], argv[3]);
    std::fprintf(stderr, "usage: %s dump IN.gguf OUT.json | write SPEC.json OUT.gguf\n", argv[0]);
    return 2;
}
