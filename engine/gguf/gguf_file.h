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
// Error codes from open(): NotFound (no such file), Io (the OS refused to
// open/map it), Unsupported (GGUF version 1 or a version newer than 3, a
// tensor type id ggml may have added after us, more metadata values than
// kMaxMetadataValues), InvalidFile (everything else: bad magic, truncation,
// lengths past the end, duplicate keys or tensors, bad dims, misaligned or
// overlapping data ...). Messages look like
//   "m.gguf: tensor 'blk.0.attn_q.weight': data [100..4196) ends past the end of the file (4000 bytes)"
//   "m.gguf: key 'general.alignment': 3 is not a power of two"
//
// Limits (a hostile file must not make us allocate without bound): arrays
// nest at most kMaxNestingDepth deep, and the whole file holds at most
// kMaxMetadataValues metadata values (a 262k-token vocabulary needs ~800k).
// Every length and count is checked against the bytes left before anything
// is allocated for it.
//
// Ownership: GgufFile owns the mapping; TensorInfo::data points into it and
// lives as long as the GgufFile. The mapping is MAP_PRIVATE and read-only; if
// another process truncates the file while it is mapped, reading tensor data
// past the new end raises SIGBUS (a limit of mmap no check can remove).
// Thread-safety: a GgufFile is immutable after open(); any number of threads
// may read it at once.
#pragma once

#include "ggml_types.h"
#include "kestrel/status.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kestrel::gguf {

inline constexpr int kMaxNestingDepth = 8;                 // arrays of arrays of ...
inline constexpr uint64_t kMaxMetadataValues = uint64_t(1) << 24;

// On-disk metadata value types (gguf_type).
enum class ValueType : uint32_t {
    UInt8 = 0, Int8 = 1, UInt16 = 2, Int16 = 3, UInt32 = 4, Int32 = 5,
    Float32 = 6, Bool = 7, String = 8, Array = 9, UInt64 = 10, Int64 = 11, Float64 = 12,
};

// "uint32", "string", "array" ...; "type 42" for ids outside the enum.
std::string valueTypeName(ValueType type);
bool isKnownValueType(uint32_t id);

struct Value;
// An array keeps its element type so that an empty array still says what it holds.
struct Array {
    ValueType elementType = ValueType::UInt8;
    std::vector<Value> items;
};

// `data` holds uint64_t for UInt8..UInt64, int64_t for Int8..Int64, double for
// Float32/Float64, bool, std::string or Array. The reader always produces a
// consistent pair; the writer checks the pair (and the range) before writing.
struct Value {
    ValueType type = ValueType::UInt8;
    std::variant<uint64_t, int64_t, double, bool, std::string, Array> data;

    static Value u8(uint8_t v) { return {ValueType::UInt8, uint64_t(v)}; }
    static Value i8(int8_t v) { return {ValueType::Int8, int64_t(v)}; }
    static Value u16(uint16_t v) { return {ValueType::UInt16, uint64_t(v)}; }
    static Value i16(int16_t v) { return {ValueType::Int16, int64_t(v)}; }
    static Value u32(uint32_t v) { return {ValueType::UInt32, uint64_t(v)}; }
    static Value i32(int32_t v) { return {ValueType::Int32, int64_t(v)}; }
    static Value u64(uint64_t v) { return {ValueType::UInt64, v}; }
    static Value i64(int64_t v) { return {ValueType::Int64, v}; }
    static Value f32(float v) { return {ValueType::Float32, double(v)}; }
    static Value f64(double v) { return {ValueType::Float64, v}; }
    static Value boolean(bool v) { return {ValueType::Bool, v}; }
    static Value string(std::string v) { return {ValueType::String, std::move(v)}; }
    static Value array(ValueType elementType, std::vector<Value> items) {
        return {ValueType::Array, Array{elementType, std::move(items)}};
    }

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
    // data lies in a read-only private file mapping (GgufFile): its pages may be
    // dropped and are read again from the file. False for bytes held in memory
    // (tests, tools), which dropping would zero.
    bool fileMapped = false;

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
    // The fallback overloads return the fallback when the key is absent AND when
    // it holds the wrong type (they cannot report); use the Result overloads
    // wherever a wrong type should stop the load.
    int64_t getInt(std::string_view key, int64_t fallback) const;
    double getFloat(std::string_view key, double fallback) const;
    bool getBool(std::string_view key, bool fallback) const;
    std::string getString(std::string_view key, std::string fallback) const;
    // Arrays of strings / numbers (token lists, scores, per-layer values). The
    // string_views point into metadata() and live as long as the GgufFile.
    Result<std::vector<std::string_view>> getStringArray(std::string_view key) const;
    Result<std::vector<double>> getFloatArray(std::string_view key) const;
    Result<std::vector<int64_t>> getIntArray(std::string_view key) const;

    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* findTensor(std::string_view name) const;

    // "file.gguf: " prefix for messages about this file.
    std::string where() const;

    // Offset in the file where tensor data starts (aligned); offsets in
    // TensorInfo are relative to it.
    uint64_t dataOffset() const { return dataOffset_; }

private:
    GgufFile() = default;
    friend class GgufParser;

    std::string path_;
    uint32_t version_ = 0;
    uint64_t size_ = 0;
    uint64_t alignment_ = 32;
    uint64_t dataOffset_ = 0;
    void* mapping_ = nullptr;
    std::map<std::string, Value, std::less<>> metadata_;
    std::vector<TensorInfo> tensors_;
    std::map<std::string, size_t, std::less<>> tensorIndex_;
};

}  // namespace kestrel::gguf
