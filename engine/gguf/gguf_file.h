// Reading GGUF files (versions 2 and 3): memory-mapped, validated up front.
//
// GgufFile::open() checks everything before returning: the header, every
// metadata key and value (strings, nested arrays, lengths against the bytes
// left), tensor infos (known types, dims whose product does not overflow,
// rows made of whole blocks, data inside the file and aligned). After that,
// every accessor is a bounds-checked lookup and tensor data pointers are safe
// to read for tensorBytes(). A bad file gives a Status naming the file, the
// key or tensor, and what was wrong.
//
// Ownership: GgufFile owns the mapping; TensorInfo::data points into it and
// lives as long as the GgufFile. Thread-safety: a GgufFile is immutable after
// open(); any number of threads may read it at once.
#pragma once

#include "ggml_types.h"
#include "kestrel/status.h"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kestrel::gguf {

// On-disk metadata value types (gguf_type).
enum class ValueType : uint32_t {
    UInt8 = 0, Int8 = 1, UInt16 = 2, Int16 = 3, UInt32 = 4, Int32 = 5,
    Float32 = 6, Bool = 7, String = 8, Array = 9, UInt64 = 10, Int64 = 11, Float64 = 12,
};

struct Value;
// An array keeps its element type so that an empty array still says what it holds.
struct Array {
    ValueType elementType = ValueType::UInt8;
    std::vector<Value> items;
};

struct Value {
    ValueType type = ValueType::UInt8;
    std::variant<uint64_t, int64_t, double, bool, std::string, Array> data;

    bool isInteger() const;
    bool isNumber() const;  // integer or float
    // Conversions that fail (nullopt) rather than truncate or guess.
    std::optional<int64_t> asInt() const;
    std::optional<uint64_t> asUInt() const;
    std::optional<double> asDouble() const;
    std::optional<bool> asBool() const;
    const std::string* asString() const;
    const Array* asArray() const;
};

struct TensorInfo {
    std::string name;
    GgmlType type = GgmlType::F32;
    std::vector<uint64_t> dims;  // ggml order: dims[0] is the fastest-varying (row length)
    uint64_t offset = 0;         // relative to the data section
    uint64_t elements = 0;
    uint64_t bytes = 0;
    const uint8_t* data = nullptr;  // into the mapping, valid for `bytes`

    uint64_t rowLength() const { return dims.empty() ? 1 : dims[0]; }
    uint64_t rows() const { return rowLength() ? elements / rowLength() : 0; }
};

class GgufFile {
public:
    ~GgufFile();
    GgufFile(const GgufFile&) = delete;
    GgufFile& operator=(const GgufFile&) = delete;

    static Result<std::unique_ptr<GgufFile>> open(const std::string& path);

    const std::string& path() const { return path_; }
    uint32_t version() const { return version_; }
    uint64_t fileSize() const { return size_; }
    uint64_t alignment() const { return alignment_; }

    // Metadata in file order of keys is not needed by callers; lookups are by key.
    const std::map<std::string, Value, std::less<>>& metadata() const { return metadata_; }
    const Value* find(std::string_view key) const;

    // Typed lookups. A key that exists with the wrong type is an error, not a default.
    Result<int64_t> getInt(std::string_view key) const;
    Result<double> getFloat(std::string_view key) const;
    Result<bool> getBool(std::string_view key) const;
    Result<std::string> getString(std::string_view key) const;
    int64_t getInt(std::string_view key, int64_t fallback) const;        // fallback only when absent
    double getFloat(std::string_view key, double fallback) const;
    bool getBool(std::string_view key, bool fallback) const;
    std::string getString(std::string_view key, std::string fallback) const;
    // Arrays of strings / numbers (token lists, scores, per-layer values).
    Result<std::vector<std::string_view>> getStringArray(std::string_view key) const;
    Result<std::vector<double>> getFloatArray(std::string_view key) const;
    Result<std::vector<int64_t>> getIntArray(std::string_view key) const;

    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* findTensor(std::string_view name) const;

    // "file.gguf: " prefix for messages about this file.
    std::string where() const;

private:
    GgufFile() = default;
    friend class GgufParser;

    std::string path_;
    uint32_t version_ = 0;
    uint64_t size_ = 0;
    uint64_t alignment_ = 32;
    void* mapping_ = nullptr;
    std::map<std::string, Value, std::less<>> metadata_;
    std::vector<TensorInfo> tensors_;
    std::map<std::string, size_t, std::less<>> tensorIndex_;
};

}  // namespace kestrel::gguf
