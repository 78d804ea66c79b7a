// Parsing and validating the GGUF layout: header, metadata, tensor infos.
#include "gguf_parser.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace kestrel::gguf {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as little-endian uint32
constexpr uint32_t kMaxDims = 4;         // GGML_MAX_DIMS

std::string quoted(std::string_view what, std::string_view name) {
    std::string s(what);
    s += " '";
    s += name;
    s += '\'';
    return s;
}

// Smallest encoding of one element, so that a count can be checked against
// the bytes left before anything is reserved for it.
uint64_t minEncodedSize(ValueType t) {
    switch (t) {
    case ValueType::UInt8: case ValueType::Int8: case ValueType::Bool: return 1;
    case ValueType::UInt16: case ValueType::Int16: return 2;
    case ValueType::UInt32: case ValueType::Int32: case ValueType::Float32: return 4;
    case ValueType::UInt64: case ValueType::Int64: case ValueType::Float64: return 8;
    case ValueType::String: return 8;    // length only
    case ValueType::Array: return 12;    // element type + count
    }
    return 1;
}

std::string dimsText(const std::vector<uint64_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(dims[i]);
    }
    return s + "]";
}

std::string rangeText(uint64_t begin, uint64_t end) {
    // Appending (rather than "[" + ...) sidesteps a GCC 12 -Wrestrict false positive.
    std::string s = "[";
    s += std::to_string(begin);
    s += "..";
    s += std::to_string(end);
    s += ')';
    return s;
}

}  // namespace

Status GgufParser::fail(ErrorCode code, const std::string& context, const std::string& what) const {
    return Status(code, file_.where() + context + ": " + what);
}

Status GgufParser::truncated(const std::string& context, const char* needed, uint64_t bytes) const {
    return fail(ErrorCode::InvalidFile, context,
                std::string("file ends while reading ") + needed + " (" + std::to_string(bytes) +
                    " bytes needed at offset " + std::to_string(cur_.pos()) + ", file is " +
                    std::to_string(cur_.size()) + " bytes)");
}

Status GgufParser::parse() {
    uint64_t tensorCount = 0, kvCount = 0;
    KESTREL_RETURN_IF_ERROR(parseHeader(tensorCount, kvCount));
    for (uint64_t i = 0; i < kvCount; ++i) KESTREL_RETURN_IF_ERROR(parseKeyValue(i));
    KESTREL_RETURN_IF_ERROR(applyAlignment());

    file_.tensors_.resize(static_cast<size_t>(tensorCount));  // bounded in parseHeader
    for (uint64_t i = 0; i < tensorCount; ++i) {
        TensorInfo& info = file_.tensors_[static_cast<size_t>(i)];
        KESTREL_RETURN_IF_ERROR(parseTensorInfo(i, info));
        if (!file_.tensorIndex_.emplace(info.name, static_cast<size_t>(i)).second)
            return fail(ErrorCode::InvalidFile, quoted("tensor", info.name), "duplicate tensor name");
    }

    const uint64_t a = file_.alignment_;
    const uint64_t dataStart = (cur_.pos() + a - 1) / a * a;  // pos <= size and a <= 2^31: no overflow
    if (tensorCount > 0 && dataStart > cur_.size())
        return fail(ErrorCode::InvalidFile, "tensor data",
                    "the data section would start at byte " + std::to_string(dataStart) +
                        ", past the end of the file (" + std::to_string(cur_.size()) + " bytes)");
    file_.dataOffset_ = dataStart;
    for (TensorInfo& info : file_.tensors_) KESTREL_RETURN_IF_ERROR(placeTensor(info));
    return checkOverlaps();
}

Status GgufParser::parseHeader(uint64_t& tensorCount, uint64_t& kvCount) {
    uint32_t magic = 0;
    if (!cur_.read(magic)) return truncated("header", "the magic", 4);
    if (magic != kMagic)
        return fail(ErrorCode::InvalidFile, "header", "not a GGUF file (the first 4 bytes are not \"GGUF\")");
    uint32_t version = 0;
    if (!cur_.read(version)) return truncated("header", "the version", 4);
    if (version == 1)
        return fail(ErrorCode::Unsupported, "header",
                    "GGUF version 1 is not supported (it predates 64-bit counts); re-convert the model with a "
                    "current llama.cpp");
    if (version == 0x02000000 || version == 0x03000000)
        return fail(ErrorCode::Unsupported, "header",
                    "big-endian GGUF files are not supported; convert the model on a little-endian machine");
    if (version != 2 && version != 3)
        return fail(ErrorCode::Unsupported, "header",
                    "GGUF version " + std::to_string(version) + " is not supported (Kestrel reads versions 2 and 3)");
    file_.version_ = version;
    if (!cur_.read(tensorCount)) return truncated("header", "the tensor count", 8);
    if (!cur_.read(kvCount)) return truncated("header", "the metadata count", 8);
    // A tensor info takes at least 32 bytes (name length, n_dims, one dim, type, offset);
    // a key/value at least 13. Checking now keeps resize() honest.
    if (tensorCount > cur_.left() / 32)
        return fail(ErrorCode::InvalidFile, "header",
                    "claims " + std::to_string(tensorCount) + " tensors but only " + std::to_string(cur_.left()) +
                        " bytes follow the header");
    if (kvCount > cur_.left() / 13)
        return fail(ErrorCode::InvalidFile, "header",
                    "claims " + std::to_string(kvCount) + " metadata keys but only " + std::to_string(cur_.left()) +
                        " bytes follow the header");
    return Status::ok();
}

Status GgufParser::readString(const std::string& context, std::string_view& out) {
    uint64_t length = 0;
    if (!cur_.read(length)) return truncated(context, "a string length", 8);
    if (length > cur_.left())
        return fail(ErrorCode::InvalidFile, context,
                    "string of " + std::to_string(length) + " bytes at offset " + std::to_string(cur_.pos() - 8) +
                        " runs past the end of the file (" + std::to_string(cur_.left()) + " bytes left)");
    cur_.take(length, out);
    return Status::ok();
}

Status GgufParser::parseKeyValue(uint64_t index) {
    std::string_view keyView;
    KESTREL_RETURN_IF_ERROR(readString("metadata key #" + std::to_string(index), keyView));
    std::string key(keyView);
    const std::string context = quoted("key", key);
    if (file_.metadata_.find(key) != file_.metadata_.end())
        return fail(ErrorCode::InvalidFile, context, "duplicate key");
    uint32_t typeId = 0;
    if (!cur_.read(typeId)) return truncated(context, "the value type", 4);
    if (!isKnownValueType(typeId))
        return fail(ErrorCode::InvalidFile, context, "unknown value type " + std::to_string(typeId));
    Value value;
    KESTREL_RETURN_IF_ERROR(parseValue(static_cast<ValueType>(typeId), 0, key, value));
    file_.metadata_.emplace(std::move(key), std::move(value));
    return Status::ok();
}

Status GgufParser::parseValue(ValueType type, int depth, const std::string& key, Value& out) {
    out.type = type;
    auto readScalar = [&](auto tag, const char* what) -> Status {
        decltype(tag) v{};
        if (!cur_.read(v)) return truncated(quoted("key", key), what, sizeof(v));
        if constexpr (std::is_floating_point_v<decltype(v)>)
            out.data = static_cast<double>(v);
        else if constexpr (std::is_signed_v<decltype(v)>)
            out.data = static_cast<int64_t>(v);
        else
            out.data = static_cast<uint64_t>(v);
        return Status::ok();
    };
    switch (type) {
    case ValueType::UInt8: return readScalar(uint8_t{}, "a uint8");
    case ValueType::Int8: return readScalar(int8_t{}, "an int8");
    case ValueType::UInt16: return readScalar(uint16_t{}, "a uint16");
    case ValueType::Int16: return readScalar(int16_t{}, "an int16");
    case ValueType::UInt32: return readScalar(uint32_t{}, "a uint32");
    case ValueType::Int32: return readScalar(int32_t{}, "an int32");
    case ValueType::UInt64: return readScalar(uint64_t{}, "a uint64");
    case ValueType::Int64: return readScalar(int64_t{}, "an int64");
    case ValueType::Float32: return readScalar(float{}, "a float32");
    case ValueType::Float64: return readScalar(double{}, "a float64");
    case ValueType::Bool: {
        uint8_t b = 0;
        if (!cur_.read(b)) return truncated(quoted("key", key), "a bool", 1);
        if (b > 1)
            return fail(ErrorCode::InvalidFile, quoted("key", key),
                        "bool at offset " + std::to_string(cur_.pos() - 1) + " is " + std::to_string(b) +
                            ", not 0 or 1");
        out.data = b == 1;
        return Status::ok();
    }
    case ValueType::String: {
        std::string_view s;
        KESTREL_RETURN_IF_ERROR(readString(quoted("key", key), s));
        out.data = std::string(s);
        return Status::ok();
    }
    case ValueType::Array: return parseArray(depth + 1, key, out);
    }
    return fail(ErrorCode::Internal, quoted("key", key), "unhandled value type");
}

Status GgufParser::parseArray(int depth, const std::string& key, Value& out) {
    const std::string context = quoted("key", key);
    if (depth > kMaxNestingDepth)
        return fail(ErrorCode::InvalidFile, context,
                    "arrays nested more than " + std::to_string(kMaxNestingDepth) + " deep");
    uint32_t elementId = 0;
    if (!cur_.read(elementId)) return truncated(context, "an array element type", 4);
    if (!isKnownValueType(elementId))
        return fail(ErrorCode::InvalidFile, context, "array of unknown value type " + std::to_string(elementId));
    const auto elementType = static_cast<ValueType>(elementId);
    uint64_t count = 0;
    if (!cur_.read(count)) return truncated(context, "an array length", 8);
    const uint64_t minSize = minEncodedSize(elementType);
    if (count > cur_.left() / minSize)
        return fail(ErrorCode::InvalidFile, context,
                    "array of " + std::to_string(count) + " " + valueTypeName(elementType) + " values needs " +
                        (count > UINT64_MAX / minSize ? std::string("more than 2^64")
                                                      : "at least " + std::to_string(count * minSize)) +
                        " bytes but only " + std::to_string(cur_.left()) + " are left");
    if (count > valuesLeft_)
        return fail(ErrorCode::Unsupported, context,
                    "the file holds more than " + std::to_string(kMaxMetadataValues) + " metadata values");
    valuesLeft_ -= count;

    out.data = Array{elementType, {}};
    auto& items = std::get<Array>(out.data).items;
    items.reserve(static_cast<size_t>(count));
    // Vocabularies make these arrays the bulk of a model's metadata (gemma3:
    // 3 x 262k values), so the common element types skip the generic path.
    switch (elementType) {
    case ValueType::String:
        for (uint64_t i = 0; i < count; ++i) {
            std::string_view s;
            KESTREL_RETURN_IF_ERROR(readString(context, s));
            items.push_back(Value{ValueType::String, std::string(s)});
        }
        return Status::ok();
    case ValueType::Float32:
    case ValueType::Int32:
    case ValueType::UInt32:
        // count * 4 <= left was checked above, so these reads cannot fail.
        for (uint64_t i = 0; i < count; ++i) {
            uint32_t raw = 0;
            cur_.read(raw);
            if (elementType == ValueType::Float32) {
                float f;
                std::memcpy(&f, &raw, 4);
                items.push_back(Value{elementType, static_cast<double>(f)});
            } else if (elementType == ValueType::Int32) {
                items.push_back(Value{elementType, static_cast<int64_t>(static_cast<int32_t>(raw))});
            } else {
                items.push_back(Value{elementType, static_cast<uint64_t>(raw)});
            }
        }
        return Status::ok();
    default:
        for (uint64_t i = 0; i < count; ++i) {
            KESTREL_RETURN_IF_ERROR(parseValue(elementType, depth, key, items.emplace_back()));
        }
        return Status::ok();
    }
}

Status GgufParser::applyAlignment() {
    const Value* v = file_.find("general.alignment");
    if (!v) return Status::ok();
    // ggml and gguf-py insist on uint32; accepting others would make files
    // that they reject.
    if (v->type != ValueType::UInt32)
        return fail(ErrorCode::InvalidFile, "key 'general.alignment'",
                    "expected uint32, found " + valueTypeName(v->type));
    const uint64_t a = *v->asUInt();
    if (a == 0) return fail(ErrorCode::InvalidFile, "key 'general.alignment'", "alignment is 0");
    if ((a & (a - 1)) != 0)
        return fail(ErrorCode::InvalidFile, "key 'general.alignment'", std::to_string(a) + " is not a power of two");
    file_.alignment_ = a;
    return Status::ok();
}

Status GgufParser::parseTensorInfo(uint64_t index, TensorInfo& info) {
    std::string_view nameView;
    KESTREL_RETURN_IF_ERROR(readString("tensor #" + std::to_string(index), nameView));
    info.name = std::string(nameView);
    const std::string context = quoted("tensor", info.name);

    uint32_t nDims = 0;
    if (!cur_.read(nDims)) return truncated(context, "the number of dimensions", 4);
    if (nDims < 1 || nDims > kMaxDims)
        return fail(ErrorCode::InvalidFile, context,
                    "has " + std::to_string(nDims) + " dimensions (expected 1 to " + std::to_string(kMaxDims) + ")");
    info.dims.resize(nDims);
    for (uint64_t& d : info.dims)
        if (!cur_.read(d)) return truncated(context, "a dimension", 8);

    uint32_t typeId = 0;
    if (!cur_.read(typeId)) return truncated(context, "the tensor type", 4);
    if (!cur_.read(info.offset)) return truncated(context, "the data offset", 8);

    for (uint64_t d : info.dims)
        if (d == 0) return fail(ErrorCode::InvalidFile, context, "dims " + dimsText(info.dims) + " contain a zero");
    uint64_t elements = 1;
    for (uint64_t d : info.dims)
        if (__builtin_mul_overflow(elements, d, &elements))
            return fail(ErrorCode::InvalidFile, context,
                        "dims " + dimsText(info.dims) + " hold more than 2^64 elements");
    info.elements = elements;

    const auto traits = ggmlTypeTraits(typeId);
    if (!traits)
        return fail(ErrorCode::Unsupported, context,
                    "unknown tensor type id " + std::to_string(typeId) + " (a newer ggml type?)");
    info.type = traits->type;
    if (info.dims[0] % traits->blockSize != 0)
        return fail(ErrorCode::InvalidFile, context,
                    "row length " + std::to_string(info.dims[0]) + " is not a whole number of " +
                        std::string(traits->name) + " blocks (" + std::to_string(traits->blockSize) + " elements)");
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(elements / traits->blockSize, uint64_t(traits->blockBytes), &bytes))
        return fail(ErrorCode::InvalidFile, context,
                    "dims " + dimsText(info.dims) + " of " + std::string(traits->name) + " need more than 2^64 bytes");
    info.bytes = bytes;
    return Status::ok();
}

Status GgufParser::placeTensor(TensorInfo& info) {
    const std::string context = quoted("tensor", info.name);
    if (info.offset % file_.alignment_ != 0)
        return fail(ErrorCode::InvalidFile, context,
                    "data offset " + std::to_string(info.offset) + " is not a multiple of the alignment " +
                        std::to_string(file_.alignment_));
    uint64_t begin = 0, end = 0;
    if (__builtin_add_overflow(file_.dataOffset_, info.offset, &begin) ||
        __builtin_add_overflow(begin, info.bytes, &end))
        return fail(ErrorCode::InvalidFile, context,
                    "data offset " + std::to_string(info.offset) + " + " + std::to_string(info.bytes) +
                        " bytes overflows 64 bits");
    if (end > cur_.size())
        return fail(ErrorCode::InvalidFile, context,
                    "data " + rangeText(begin, end) + " ends past the end of the file (" +
                        std::to_string(cur_.size()) + " bytes)");
    info.data = data_ + begin;
    info.fileMapped = true;  // GgufParser reads GgufFile's mapping only
    return Status::ok();
}

Status GgufParser::checkOverlaps() const {
    const auto& tensors = file_.tensors_;
    std::vector<size_t> order(tensors.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
    for (size_t i = 1; i < order.size(); ++i) {
        const TensorInfo& prev = tensors[order[i - 1]];
        const TensorInfo& cur = tensors[order[i]];
        if (cur.offset < prev.offset + prev.bytes) {  // both already known to lie inside the file
            const uint64_t base = file_.dataOffset_;
            return fail(ErrorCode::InvalidFile, quoted("tensor", cur.name),
                        "data " + rangeText(base + cur.offset, base + cur.offset + cur.bytes) + " overlaps tensor '" +
                            prev.name + "' " + rangeText(base + prev.offset, base + prev.offset + prev.bytes));
        }
    }
    return Status::ok();
}

}  // namespace kestrel::gguf
