// Metadata values: type names and the non-lossy conversions callers use.
#include "gguf_file.h"

#include <limits>

namespace kestrel::gguf {

std::string valueTypeName(ValueType type) {
    switch (type) {
    case ValueType::UInt8: return "uint8";
    case ValueType::Int8: return "int8";
    case ValueType::UInt16: return "uint16";
    case ValueType::Int16: return "int16";
    case ValueType::UInt32: return "uint32";
    case ValueType::Int32: return "int32";
    case ValueType::Float32: return "float32";
    case ValueType::Bool: return "bool";
    case ValueType::String: return "string";
    case ValueType::Array: return "array";
    case ValueType::UInt64: return "uint64";
    case ValueType::Int64: return "int64";
    case ValueType::Float64: return "float64";
    }
    return "type " + std::to_string(static_cast<uint32_t>(type));
}

bool isKnownValueType(uint32_t id) { return id <= static_cast<uint32_t>(ValueType::Float64); }

bool Value::isInteger() const {
    switch (type) {
    case ValueType::UInt8: case ValueType::Int8: case ValueType::UInt16: case ValueType::Int16:
    case ValueType::UInt32: case ValueType::Int32: case ValueType::UInt64: case ValueType::Int64:
        return true;
    default:
        return false;
    }
}

bool Value::isNumber() const {
    return isInteger() || type == ValueType::Float32 || type == ValueType::Float64;
}

std::optional<int64_t> Value::asInt() const {
    if (!isInteger()) return std::nullopt;
    if (const auto* u = std::get_if<uint64_t>(&data)) {
        if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
        return static_cast<int64_t>(*u);
    }
    if (const auto* i = std::get_if<int64_t>(&data)) return *i;
    return std::nullopt;
}

std::optional<uint64_t> Value::asUInt() const {
    if (!isInteger()) return std::nullopt;
    if (const auto* u = std::get_if<uint64_t>(&data)) return *u;
    if (const auto* i = std::get_if<int64_t>(&data)) {
        if (*i < 0) return std::nullopt;
        return static_cast<uint64_t>(*i);
    }
    return std::nullopt;
}

std::optional<double> Value::asDouble() const {
    if (const auto* d = std::get_if<double>(&data); d && !isInteger()) return *d;
    if (const auto* u = std::get_if<uint64_t>(&data); u && isInteger()) return static_cast<double>(*u);
    if (const auto* i = std::get_if<int64_t>(&data); i && isInteger()) return static_cast<double>(*i);
    return std::nullopt;
}

std::optional<bool> Value::asBool() const {
    if (type != ValueType::Bool) return std::nullopt;
    if (const auto* b = std::get_if<bool>(&data)) return *b;
    return std::nullopt;
}

const std::string* Value::asString() const {
    return type == ValueType::String ? std::get_if<std::string>(&data) : nullptr;
}

const Array* Value::asArray() const {
    return type == ValueType::Array ? std::get_if<Array>(&data) : nullptr;
}

}  // namespace kestrel::gguf
