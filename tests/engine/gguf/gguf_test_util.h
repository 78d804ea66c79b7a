// Helpers shared by the GGUF suites: hand-assembling GGUF bytes (so hostile
// files can say things no writer would) and saving bytes to a path.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <QByteArray>
#include <QFile>
#include <QString>

namespace kestrel::test {

inline constexpr uint32_t kGgufMagic = 0x46554747;

// Little-endian byte assembly, one field at a time.
struct GgufBytes {
    std::vector<uint8_t> b;

    template <typename T>
    GgufBytes& put(T v) {
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        b.insert(b.end(), p, p + sizeof(T));
        return *this;
    }
    GgufBytes& u8(uint8_t v) { return put(v); }
    GgufBytes& u32(uint32_t v) { return put(v); }
    GgufBytes& u64(uint64_t v) { return put(v); }
    GgufBytes& str(std::string_view s) {
        u64(s.size());
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    GgufBytes& raw(const std::vector<uint8_t>& more) {
        b.insert(b.end(), more.begin(), more.end());
        return *this;
    }
    GgufBytes& zeros(size_t n) {
        b.insert(b.end(), n, 0);
        return *this;
    }
    GgufBytes& padTo(uint64_t alignment) { return zeros((alignment - b.size() % alignment) % alignment); }
};

// One key/value, encoded (key, type, value).
inline std::vector<uint8_t> kvU32(std::string_view key, uint32_t v) {
    GgufBytes x;
    x.str(key).u32(4).u32(v);
    return x.b;
}
inline std::vector<uint8_t> kvString(std::string_view key, std::string_view v) {
    GgufBytes x;
    x.str(key).u32(8).str(v);
    return x.b;
}
// key, type id, then the already-encoded value bytes.
inline std::vector<uint8_t> kvRaw(std::string_view key, uint32_t type, const std::vector<uint8_t>& value) {
    GgufBytes x;
    x.str(key).u32(type).raw(value);
    return x.b;
}

struct TensorSpec {
    std::string name;
    std::vector<uint64_t> dims;
    uint32_t type = 0;  // F32
    uint64_t offset = 0;
    int64_t nDimsOverride = -1;  // write this n_dims instead of dims.size()
};

// A whole file from parts; defaults describe a valid file.
struct FileSpec {
    uint32_t magic = kGgufMagic;
    uint32_t version = 3;
    int64_t tensorCountOverride = -1;
    int64_t kvCountOverride = -1;
    std::vector<std::vector<uint8_t>> kvs;
    std::vector<TensorSpec> tensors;
    uint64_t alignment = 32;  // for the padding before the data section
    uint64_t dataBytes = 0;   // zero bytes appended as the data section

    std::vector<uint8_t> build() const {
        GgufBytes x;
        x.u32(magic).u32(version);
        x.u64(tensorCountOverride >= 0 ? uint64_t(tensorCountOverride) : tensors.size());
        x.u64(kvCountOverride >= 0 ? uint64_t(kvCountOverride) : kvs.size());
        for (const auto& kv : kvs) x.raw(kv);
        for (const auto& t : tensors) {
            x.str(t.name).u32(t.nDimsOverride >= 0 ? uint32_t(t.nDimsOverride) : uint32_t(t.dims.size()));
            for (uint64_t d : t.dims) x.u64(d);
            x.u32(t.type).u64(t.offset);
        }
        if (dataBytes) x.padTo(alignment).zeros(dataBytes);
        return x.b;
    }
};

inline bool saveBytes(const QString& path, const uint8_t* data, size_t size) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
    return f.write(reinterpret_cast<const char*>(data), qint64(size)) == qint64(size);
}
inline bool saveBytes(const QString& path, const std::vector<uint8_t>& bytes) {
    return saveBytes(path, bytes.data(), bytes.size());
}

inline std::vector<uint8_t> loadBytes(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QByteArray all = f.readAll();
    return std::vector<uint8_t>(all.begin(), all.end());
}

}  // namespace kestrel::test
