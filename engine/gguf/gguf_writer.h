// Writing GGUF version 3 files: for tests, `kestrel-cli synth` and tools.
//
// Usage: add metadata and tensors (data is copied), then write(). Keys keep
// the order they were added (set() on an existing key replaces it in place).
// Tensors are laid out in the order added, each at a multiple of the
// alignment and padded to it; a non-default alignment is recorded as uint32
// general.alignment (a caller-set general.alignment must agree).
//
// Errors: addTensor() returns InvalidArgument for bad dims/type/byte counts or
// a duplicate name; write() returns InvalidArgument for a Value whose type and
// data disagree or do not fit (e.g. UInt8 holding 300), naming the file and
// key, and Io with strerror when the OS refuses (disk full, no such
// directory). write() goes through path + ".tmp", fsync and rename, so `path`
// holds either its old contents or the complete new file, and the temporary
// is removed on failure.
//
// Thread-safety: none; one writer per thread.
#pragma once

#include "gguf_file.h"

namespace kestrel::gguf {

class GgufWriter {
public:
    explicit GgufWriter(uint64_t alignment = 32) : alignment_(alignment) {}

    void set(std::string key, Value value);  // replaces an existing key
    void setUInt32(std::string key, uint32_t v);
    void setInt32(std::string key, int32_t v);
    void setUInt64(std::string key, uint64_t v);
    void setFloat32(std::string key, float v);
    void setBool(std::string key, bool v);
    void setString(std::string key, std::string v);
    void setStringArray(std::string key, const std::vector<std::string>& v);
    void setFloat32Array(std::string key, const std::vector<float>& v);
    void setInt32Array(std::string key, const std::vector<int32_t>& v);

    // `bytes` must equal ggmlRowBytes(type, dims[0]) * rows; checked.
    Status addTensor(std::string name, GgmlType type, std::vector<uint64_t> dims, std::span<const uint8_t> bytes);

    // Writes atomically (temporary file, then rename) so a full disk never leaves half a model.
    Status write(const std::string& path) const;

    // Convenience builders so tests can craft values (nested arrays included).
    static Value makeString(std::string s);
    static Value makeArray(ValueType elementType, std::vector<Value> items);

private:
    struct PendingTensor {
        std::string name;
        GgmlType type;
        std::vector<uint64_t> dims;
        std::vector<uint8_t> bytes;
    };
    uint64_t alignment_;
    std::vector<std::pair<std::string, Value>> metadata_;
    std::vector<PendingTensor> tensors_;
};

}  // namespace kestrel::gguf
