// GgufFile: mapping the file and the typed lookups over its metadata.
#include "gguf_file.h"

#include "gguf_parser.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kestrel::gguf {
namespace {

// Closes the descriptor on every path out of open(); the mapping outlives it.
struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

std::string keyContext(std::string_view key) { return "key '" + std::string(key) + "': "; }

}  // namespace

GgufFile::~GgufFile() {
    if (mapping_) ::munmap(mapping_, static_cast<size_t>(size_));
}

Result<std::unique_ptr<GgufFile>> GgufFile::open(const std::string& path) {
    std::unique_ptr<GgufFile> file(new GgufFile());
    file->path_ = path;

    Fd fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (fd.fd < 0) {
        const int err = errno;
        return Status(err == ENOENT ? ErrorCode::NotFound : ErrorCode::Io,
                      file->where() + "cannot open: " + std::strerror(err));
    }
    struct stat st {};
    if (::fstat(fd.fd, &st) != 0)
        return Status(ErrorCode::Io, file->where() + "cannot stat: " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return Status(ErrorCode::InvalidFile, file->where() + "not a regular file");
    if (st.st_size == 0) return Status(ErrorCode::InvalidFile, file->where() + "header: the file is empty");
    if (static_cast<uint64_t>(st.st_size) > std::numeric_limits<size_t>::max())
        return Status(ErrorCode::Unsupported, file->where() + "too large to map on this system");
    file->size_ = static_cast<uint64_t>(st.st_size);

    void* map = ::mmap(nullptr, static_cast<size_t>(file->size_), PROT_READ, MAP_PRIVATE, fd.fd, 0);
    if (map == MAP_FAILED) {
        const int err = errno;
        return Status(err == ENOMEM ? ErrorCode::OutOfMemory : ErrorCode::Io,
                      file->where() + "cannot map " + std::to_string(file->size_) + " bytes: " + std::strerror(err));
    }
    file->mapping_ = map;  // the destructor unmaps from here on, error or not

    GgufParser parser(*file, static_cast<const uint8_t*>(map), file->size_);
    KESTREL_RETURN_IF_ERROR(parser.parse());
    return file;
}

std::string GgufFile::where() const { return path_ + ": "; }

const Value* GgufFile::find(std::string_view key) const {
    auto it = metadata_.find(key);
    return it == metadata_.end() ? nullptr : &it->second;
}

const TensorInfo* GgufFile::findTensor(std::string_view name) const {
    auto it = tensorIndex_.find(name);
    return it == tensorIndex_.end() ? nullptr : &tensors_[it->second];
}

namespace {

Status missing(const GgufFile& f, std::string_view key) {
    return Status(ErrorCode::NotFound, f.where() + keyContext(key) + "missing");
}

Status wrongType(const GgufFile& f, std::string_view key, const char* expected, const Value& v) {
    return Status(ErrorCode::InvalidFile,
                  f.where() + keyContext(key) + "expected " + expected + ", found " + valueTypeName(v.type));
}

std::string arrayTypeName(const Array& a) { return "array of " + valueTypeName(a.elementType); }

}  // namespace

Result<int64_t> GgufFile::getInt(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return missing(*this, key);
    if (!v->isInteger()) return wrongType(*this, key, "an integer", *v);
    auto i = v->asInt();
    if (!i)
        return Status(ErrorCode::InvalidFile, where() + keyContext(key) + "value " +
                                                  std::to_string(std::get<uint64_t>(v->data)) +
                                                  " does not fit in int64");
    return *i;
}

Result<double> GgufFile::getFloat(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return missing(*this, key);
    auto d = v->asDouble();
    if (!d) return wrongType(*this, key, "a number", *v);
    return *d;
}

Result<bool> GgufFile::getBool(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return missing(*this, key);
    auto b = v->asBool();
    if (!b) return wrongType(*this, key, "bool", *v);
    return *b;
}

Result<std::string> GgufFile::getString(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return missing(*this, key);
    const std::string* s = v->asString();
    if (!s) return wrongType(*this, key, "string", *v);
    return *s;
}

int64_t GgufFile::getInt(std::string_view key, int64_t fallback) const {
    const Value* v = find(key);
    auto i = v ? v->asInt() : std::nullopt;
    return i ? *i : fallback;
}

double GgufFile::getFloat(std::string_view key, double fallback) const {
    const Value* v = find(key);
    auto d = v ? v->asDouble() : std::nullopt;
    return d ? *d : fallback;
}

bool GgufFile::getBool(std::string_view key, bool fallback) const {
    const Value* v = find(key);
    auto b = v ? v->asBool() : std::nullopt;
    return b ? *b : fallback;
}

std::string GgufFile::getString(std::string_view key, std::string fallback) const {
    const Value* v = find(key);
    const std::string* s = v ? v->asString() : nullptr;
    return s ? *s : std::move(fallback);
}

Result<std::vector<std::string_view>> GgufFile::getStringArray(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return missing(*this, key);
    const Array* a = v->asArray();
    if (!a) return wrongType(*this, key, "array of string", *v);
    if (a->elementType != ValueType::String)
        return Status(ErrorCode::InvalidFile,
                      where() + keyContext(key) + "expected array of string, found " + arrayTypeName(*a));
    std::vector<std::string_view> out;
    out.reserve(a->items.size());
    for (const Value& item : a->items) out.emplace_back(*item.asString());
    return out;
}

Result<std::vector<double>> GgufFile::getFloatArray(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return missing(*this, key);
    const Array* a = v->asArray();
    if (!a) return wrongType(*this, key, "array of numbers", *v);
    if (!Value{a->elementType, uint64_t{0}}.isNumber())
        return Status(ErrorCode::InvalidFile,
                      where() + keyContext(key) + "expected array of numbers, found " + arrayTypeName(*a));
    std::vector<double> out;
    out.reserve(a->items.size());
    for (const Value& item : a->items) {
        auto d = item.asDouble();
        if (!d)
            return Status(ErrorCode::InvalidFile,
                          where() + keyContext(key) + "expected array of numbers, found " + arrayTypeName(*a));
        out.push_back(*d);
    }
    return out;
}

Result<std::vector<int64_t>> GgufFile::getIntArray(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return missing(*this, key);
    const Array* a = v->asArray();
    if (!a) return wrongType(*this, key, "array of integers", *v);
    if (!Value{a->elementType, uint64_t{0}}.isInteger())
        return Status(ErrorCode::InvalidFile,
                      where() + keyContext(key) + "expected array of integers, found " + arrayTypeName(*a));
    std::vector<int64_t> out;
    out.reserve(a->items.size());
    for (size_t i = 0; i < a->items.size(); ++i) {
        auto x = a->items[i].asInt();
        if (!x)
            return Status(ErrorCode::InvalidFile, where() + keyContext(key) + "element " + std::to_string(i) +
                                                      " does not fit in int64");
        out.push_back(*x);
    }
    return out;
}

}  // namespace kestrel::gguf
