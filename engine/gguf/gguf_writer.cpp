// GgufWriter: serialising metadata and tensors as GGUF v3, written atomically.
#include "gguf_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <unistd.h>

namespace kestrel::gguf {
namespace {

constexpr uint32_t kVersion = 3;
constexpr uint64_t kDefaultAlignment = 32;

class Bytes {
public:
    template <typename T>
    void put(T v) {
        static_assert(std::is_trivially_copyable_v<T>);
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        buf.insert(buf.end(), p, p + sizeof(T));
    }
    void putString(std::string_view s) {
        put<uint64_t>(s.size());
        buf.insert(buf.end(), s.begin(), s.end());
    }
    std::vector<uint8_t> buf;
};

// `key` arrives as "<path>: key '<name>'" so that messages say which file and key.
Status badValue(const std::string& key, const std::string& what) {
    return Status(ErrorCode::InvalidArgument, key + ": " + what);
}

// The (type, data) pair must agree and the number must fit the declared width,
// otherwise the file would say something the caller did not mean.
Status encodeValue(const std::string& key, const Value& v, int depth, Bytes& out) {
    auto unsignedFits = [&](uint64_t max, auto tag) -> Status {
        const auto* u = std::get_if<uint64_t>(&v.data);
        if (!u) return badValue(key, valueTypeName(v.type) + " value does not hold an unsigned integer");
        if (*u > max) return badValue(key, std::to_string(*u) + " does not fit in " + valueTypeName(v.type));
        out.put(static_cast<decltype(tag)>(*u));
        return Status::ok();
    };
    auto signedFits = [&](int64_t min, int64_t max, auto tag) -> Status {
        const auto* i = std::get_if<int64_t>(&v.data);
        if (!i) return badValue(key, valueTypeName(v.type) + " value does not hold a signed integer");
        if (*i < min || *i > max) return badValue(key, std::to_string(*i) + " does not fit in " + valueTypeName(v.type));
        out.put(static_cast<decltype(tag)>(*i));
        return Status::ok();
    };
    switch (v.type) {
    case ValueType::UInt8: return unsignedFits(UINT8_MAX, uint8_t{});
    case ValueType::UInt16: return unsignedFits(UINT16_MAX, uint16_t{});
    case ValueType::UInt32: return unsignedFits(UINT32_MAX, uint32_t{});
    case ValueType::UInt64: return unsignedFits(UINT64_MAX, uint64_t{});
    case ValueType::Int8: return signedFits(INT8_MIN, INT8_MAX, int8_t{});
    case ValueType::Int16: return signedFits(INT16_MIN, INT16_MAX, int16_t{});
    case ValueType::Int32: return signedFits(INT32_MIN, INT32_MAX, int32_t{});
    case ValueType::Int64: return signedFits(INT64_MIN, INT64_MAX, int64_t{});
    case ValueType::Float32:
    case ValueType::Float64: {
        const auto* d = std::get_if<double>(&v.data);
        if (!d) return badValue(key, valueTypeName(v.type) + " value does not hold a double");
        if (v.type == ValueType::Float32)
            out.put(static_cast<float>(*d));
        else
            out.put(*d);
        return Status::ok();
    }
    case ValueType::Bool: {
        const auto* b = std::get_if<bool>(&v.data);
        if (!b) return badValue(key, "bool value does not hold a bool");
        out.put<uint8_t>(*b ? 1 : 0);
        return Status::ok();
    }
    case ValueType::String: {
        const auto* s = std::get_if<std::string>(&v.data);
        if (!s) return badValue(key, "string value does not hold a string");
        out.putString(*s);
        return Status::ok();
    }
    case ValueType::Array: {
        const auto* a = std::get_if<Array>(&v.data);
        if (!a) return badValue(key, "array value does not hold an Array");
        if (depth >= kMaxNestingDepth)
            return badValue(key, "arrays nested more than " + std::to_string(kMaxNestingDepth) +
                                     " deep (the reader would reject the file)");
        if (!isKnownValueType(static_cast<uint32_t>(a->elementType)))
            return badValue(key, "array of unknown " + valueTypeName(a->elementType));
        out.put(static_cast<uint32_t>(a->elementType));
        out.put<uint64_t>(a->items.size());
        for (size_t i = 0; i < a->items.size(); ++i) {
            if (a->items[i].type != a->elementType)
                return badValue(key, "element " + std::to_string(i) + " is " + valueTypeName(a->items[i].type) +
                                         " in an array of " + valueTypeName(a->elementType));
            KESTREL_RETURN_IF_ERROR(encodeValue(key, a->items[i], depth + 1, out));
        }
        return Status::ok();
    }
    }
    return badValue(key, "unknown " + valueTypeName(v.type));
}

uint64_t alignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// Writes everything or reports why not; short writes (a full disk) are errors.
bool writeAll(int fd, const uint8_t* p, size_t n, int& err) {
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            err = errno;
            return false;
        }
        if (w == 0) {
            err = ENOSPC;
            return false;
        }
        p += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

bool writeZeros(int fd, uint64_t n, int& err) {
    static const uint8_t zeros[256] = {};
    while (n > 0) {
        const size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, sizeof(zeros)));
        if (!writeAll(fd, zeros, chunk, err)) return false;
        n -= chunk;
    }
    return true;
}

}  // namespace

void GgufWriter::set(std::string key, Value value) {
    for (auto& kv : metadata_)
        if (kv.first == key) {
            kv.second = std::move(value);
            return;
        }
    metadata_.emplace_back(std::move(key), std::move(value));
}

void GgufWriter::setUInt32(std::string key, uint32_t v) { set(std::move(key), Value::u32(v)); }
void GgufWriter::setInt32(std::string key, int32_t v) { set(std::move(key), Value::i32(v)); }
void GgufWriter::setUInt64(std::string key, uint64_t v) { set(std::move(key), Value::u64(v)); }
void GgufWriter::setFloat32(std::string key, float v) { set(std::move(key), Value::f32(v)); }
void GgufWriter::setBool(std::string key, bool v) { set(std::move(key), Value::boolean(v)); }
void GgufWriter::setString(std::string key, std::string v) { set(std::move(key), Value::string(std::move(v))); }

void GgufWriter::setStringArray(std::string key, const std::vector<std::string>& v) {
    std::vector<Value> items;
    items.reserve(v.size());
    for (const auto& s : v) items.push_back(Value::string(s));
    set(std::move(key), Value::array(ValueType::String, std::move(items)));
}

void GgufWriter::setFloat32Array(std::string key, const std::vector<float>& v) {
    std::vector<Value> items;
    items.reserve(v.size());
    for (float f : v) items.push_back(Value::f32(f));
    set(std::move(key), Value::array(ValueType::Float32, std::move(items)));
}

void GgufWriter::setInt32Array(std::string key, const std::vector<int32_t>& v) {
    std::vector<Value> items;
    items.reserve(v.size());
    for (int32_t i : v) items.push_back(Value::i32(i));
    set(std::move(key), Value::array(ValueType::Int32, std::move(items)));
}

Value GgufWriter::makeString(std::string s) { return Value::string(std::move(s)); }
Value GgufWriter::makeArray(ValueType elementType, std::vector<Value> items) {
    return Value::array(elementType, std::move(items));
}

Status GgufWriter::addTensor(std::string name, GgmlType type, std::vector<uint64_t> dims,
                             std::span<const uint8_t> bytes) {
    const std::string context = "gguf writer: tensor '" + name + "': ";
    for (const auto& t : tensors_)
        if (t.name == name) return Status(ErrorCode::InvalidArgument, context + "added twice");
    if (dims.empty() || dims.size() > 4)
        return Status(ErrorCode::InvalidArgument,
                      context + std::to_string(dims.size()) + " dimensions (expected 1 to 4)");
    uint64_t elements = 1;
    for (uint64_t d : dims) {
        if (d == 0) return Status(ErrorCode::InvalidArgument, context + "a dimension is 0");
        if (__builtin_mul_overflow(elements, d, &elements))
            return Status(ErrorCode::InvalidArgument, context + "more than 2^64 elements");
    }
    const auto traits = ggmlTypeTraits(type);
    if (!traits)
        return Status(ErrorCode::InvalidArgument,
                      context + "unknown type id " + std::to_string(static_cast<uint32_t>(type)));
    if (dims[0] % traits->blockSize != 0)
        return Status(ErrorCode::InvalidArgument, context + "row length " + std::to_string(dims[0]) +
                                                      " is not a whole number of " + std::string(traits->name) +
                                                      " blocks");
    uint64_t expected = 0;
    if (__builtin_mul_overflow(elements / traits->blockSize, uint64_t(traits->blockBytes), &expected) ||
        expected != bytes.size())
        return Status(ErrorCode::InvalidArgument, context + "got " + std::to_string(bytes.size()) +
                                                      " bytes, the dims and type need " + std::to_string(expected));
    tensors_.push_back({std::move(name), type, std::move(dims), std::vector<uint8_t>(bytes.begin(), bytes.end())});
    return Status::ok();
}

Status GgufWriter::write(const std::string& path) const {
    if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0 || alignment_ > UINT32_MAX)
        return Status(ErrorCode::InvalidArgument,
                      path + ": alignment " + std::to_string(alignment_) + " is not a power of two that fits uint32");

    // general.alignment must agree with the layout we produce.
    auto metadata = metadata_;
    auto it = std::find_if(metadata.begin(), metadata.end(), [](const auto& kv) { return kv.first == "general.alignment"; });
    if (it != metadata.end()) {
        const auto a = it->second.type == ValueType::UInt32 ? it->second.asUInt() : std::nullopt;
        if (!a || *a != alignment_)
            return Status(ErrorCode::InvalidArgument,
                          path + ": key 'general.alignment' must be uint32 " + std::to_string(alignment_) +
                              ", the alignment this writer was made with");
    } else if (alignment_ != kDefaultAlignment) {
        metadata.emplace_back("general.alignment", Value::u32(static_cast<uint32_t>(alignment_)));
    }

    Bytes head;
    head.buf.reserve(4096);
    head.put<uint32_t>(0x46554747);  // "GGUF"
    head.put<uint32_t>(kVersion);
    head.put<uint64_t>(tensors_.size());
    head.put<uint64_t>(metadata.size());
    for (const auto& [key, value] : metadata) {
        head.putString(key);
        head.put(static_cast<uint32_t>(value.type));
        KESTREL_RETURN_IF_ERROR(encodeValue(path + ": key '" + key + "'", value, 0, head));
    }
    uint64_t offset = 0;
    std::vector<uint64_t> offsets;
    for (const auto& t : tensors_) {
        head.putString(t.name);
        head.put(static_cast<uint32_t>(t.dims.size()));
        for (uint64_t d : t.dims) head.put(d);
        head.put(static_cast<uint32_t>(t.type));
        head.put(offset);
        offsets.push_back(offset);
        offset = alignUp(offset + t.bytes.size(), alignment_);
    }

    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Status(ErrorCode::Io, tmp + ": cannot create: " + std::strerror(errno));

    int err = 0;
    bool ok = writeAll(fd, head.buf.data(), head.buf.size(), err);
    if (ok && !tensors_.empty()) ok = writeZeros(fd, alignUp(head.buf.size(), alignment_) - head.buf.size(), err);
    for (size_t i = 0; ok && i < tensors_.size(); ++i) {
        const auto& bytes = tensors_[i].bytes;
        ok = writeAll(fd, bytes.data(), bytes.size(), err) &&
             writeZeros(fd, alignUp(bytes.size(), alignment_) - bytes.size(), err);
    }
    if (ok && ::fsync(fd) != 0) {
        err = errno;
        ok = false;
    }
    if (::close(fd) != 0 && ok) {
        err = errno;
        ok = false;
    }
    if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
        err = errno;
        ok = false;
    }
    if (!ok) {
        ::unlink(tmp.c_str());
        return Status(ErrorCode::Io, path + ": cannot write: " + std::strerror(err));
    }
    // Make the rename itself durable; a failure here leaves a complete file, so it is not an error.
    const auto slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    return Status::ok();
}

}  // namespace kestrel::gguf
