// Internal: fills a GgufFile from its mapped bytes, validating as it goes.
//
// One parser per open(); not reused, not shared between threads. The parser
// only reads through a Cursor, so a hostile file can at worst produce an
// error message, never a read outside the mapping.
#pragma once

#include "gguf_cursor.h"
#include "gguf_file.h"

namespace kestrel::gguf {

class GgufParser {
public:
    GgufParser(GgufFile& file, const uint8_t* data, uint64_t size) : file_(file), data_(data), cur_(data, size) {}

    Status parse();

private:
    Status parseHeader(uint64_t& tensorCount, uint64_t& kvCount);
    Status parseKeyValue(uint64_t index);
    Status parseValue(ValueType type, int depth, const std::string& key, Value& out);
    Status parseArray(int depth, const std::string& key, Value& out);
    Status readString(const std::string& context, std::string_view& out);
    Status applyAlignment();
    Status parseTensorInfo(uint64_t index, TensorInfo& info);
    Status placeTensor(TensorInfo& info);
    Status checkOverlaps() const;

    // "<file>: <context>: <what>"
    Status fail(ErrorCode code, const std::string& context, const std::string& what) const;
    Status truncated(const std::string& context, const char* needed, uint64_t bytes) const;

    GgufFile& file_;
    const uint8_t* data_;
    Cursor cur_;
    uint64_t valuesLeft_ = kMaxMetadataValues;
};

}  // namespace kestrel::gguf
