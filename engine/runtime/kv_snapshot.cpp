#include "kv_snapshot.h"

#include "kv_cache.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <new>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

namespace kestrel::runtime {

static_assert(std::endian::native == std::endian::little, "snapshot files and payloads are little-endian");
static_assert(static_cast<int>(KvStorage::F32) == 0 && static_cast<int>(KvStorage::F16) == 1 &&
                  static_cast<int>(KvStorage::Q8) == 2,
              "snapshot tags store KvStorage as these integers");

namespace {

constexpr char kMagic[4] = {'K', 'S', 'N', 'P'};
constexpr uint32_t kFixedHeaderBytes = 72;
constexpr size_t kHeaderHashOffset = 56;
constexpr size_t kDataHashOffset = 64;
constexpr size_t kIoChunkBytes = 4u << 20;
constexpr const char* kExtension = ".ksnp";
constexpr const char* kTemporaryMarker = ".ksnp.tmp.";
constexpr size_t kKeyHexDigits = 32;

struct FileCloser {
    int fd = -1;
    ~FileCloser() {
        if (fd >= 0) ::close(fd);
    }
};

struct Hasher {
    XXH3_state_t state;
    Hasher() {
        XXH3_INITSTATE(&state);
        XXH3_64bits_reset(&state);
    }
    void add(const void* data, size_t bytes) { XXH3_64bits_update(&state, data, bytes); }
    uint64_t digest() { return XXH3_64bits_digest(&state); }
};

template <typename T>
void put(std::vector<uint8_t>& out, size_t offset, T value) {
    std::memcpy(out.data() + offset, &value, sizeof value);
}

template <typename T>
T get(const uint8_t* in, size_t offset) {
    T value;
    std::memcpy(&value, in + offset, sizeof value);
    return value;
}

// The storage a tag names, if it is one this engine knows.
std::optional<KvStorage> knownStorage(int32_t storage) {
    switch (storage) {
        case static_cast<int32_t>(KvStorage::F32): return KvStorage::F32;
        case static_cast<int32_t>(KvStorage::F16): return KvStorage::F16;
        case static_cast<int32_t>(KvStorage::Q8): return KvStorage::Q8;
        default: return std::nullopt;
    }
}

const char* storageName(int32_t storage) {
    switch (storage) {
        case static_cast<int32_t>(KvStorage::F32): return "F32";
        case static_cast<int32_t>(KvStorage::F16): return "F16";
        case static_cast<int32_t>(KvStorage::Q8): return "Q8";
        default: return "unknown";
    }
}

// Whether a tag describes KV rows this engine can lay out.
bool layoutKnown(const SnapshotTag& tag) {
    const auto storage = knownStorage(tag.kvStorage);
    return storage && tag.layers > 0 && tag.kvHeads > 0 && tag.headDim > 0 &&
           (*storage != KvStorage::Q8 || tag.headDim % kKvQ8Block == 0);
}

uint64_t headerBytesFor(const SnapshotTag& tag) {
    return kFixedHeaderBytes + tag.modelFingerprint.size() + tag.engineVersion.size();
}

Status checkTag(const SnapshotTag& tag) {
    if (!knownStorage(tag.kvStorage))
        return Status(ErrorCode::InvalidArgument, "snapshot tag: unknown KV storage " + std::to_string(tag.kvStorage));
    if (!layoutKnown(tag))
        return Status(ErrorCode::InvalidArgument, "snapshot tag: layers, KV heads and head dimension must be positive "
                                                  "(the head dimension a multiple of 32 for Q8)");
    if (std::max(tag.modelFingerprint.size(), tag.engineVersion.size()) > kSnapshotMaxTagStringBytes)
        return Status(ErrorCode::InvalidArgument, "snapshot tag: model fingerprint and engine version must be at most " +
                                                      std::to_string(kSnapshotMaxTagStringBytes) + " bytes");
    return Status::ok();
}

Status checkWriteArguments(const SnapshotTag& tag, std::span<const int32_t> tokens, std::span<const uint8_t> kv) {
    KESTREL_RETURN_IF_ERROR(checkTag(tag));
    const uint64_t want = snapshotPayloadBytes(tag, static_cast<int64_t>(tokens.size()));
    if (want == 0 && !tokens.empty())
        return Status(ErrorCode::InvalidArgument, "snapshot of " + std::to_string(tokens.size()) + " tokens is too large");
    if (kv.size() != want)
        return Status(ErrorCode::InvalidArgument, "snapshot payload is " + std::to_string(kv.size()) + " bytes; " +
                                                      std::to_string(tokens.size()) + " tokens of this cache need " +
                                                      std::to_string(want));
    const auto negative = std::find_if(tokens.begin(), tokens.end(), [](int32_t t) { return t < 0; });
    if (negative != tokens.end())
        return Status(ErrorCode::InvalidArgument,
                      "snapshot token at position " + std::to_string(negative - tokens.begin()) + " is negative");
    return Status::ok();
}

uint64_t headerHash(const uint8_t* header, size_t headerBytes) {
    Hasher h;
    h.add(header, kHeaderHashOffset);
    h.add(header + kDataHashOffset, headerBytes - kDataHashOffset);
    return h.digest();
}

std::vector<uint8_t> encodeHeader(const SnapshotTag& tag, uint64_t tokens, uint64_t payloadBytes, uint64_t dataHash) {
    std::vector<uint8_t> out(headerBytesFor(tag));
    std::memcpy(out.data(), kMagic, sizeof kMagic);
    put<uint32_t>(out, 4, kSnapshotFormatVersion);
    put<uint32_t>(out, 8, static_cast<uint32_t>(out.size()));
    put<uint32_t>(out, 12, static_cast<uint32_t>(tag.modelFingerprint.size()));
    put<uint32_t>(out, 16, static_cast<uint32_t>(tag.engineVersion.size()));
    put<int32_t>(out, 20, tag.kvStorage);
    put<int32_t>(out, 24, tag.layers);
    put<int32_t>(out, 28, tag.kvHeads);
    put<int32_t>(out, 32, tag.headDim);
    put<uint32_t>(out, 36, 0);
    put<uint64_t>(out, 40, tokens);
    put<uint64_t>(out, 48, payloadBytes);
    put<uint64_t>(out, kDataHashOffset, dataHash);
    std::memcpy(out.data() + kFixedHeaderBytes, tag.modelFingerprint.data(), tag.modelFingerprint.size());
    std::memcpy(out.data() + kFixedHeaderBytes + tag.modelFingerprint.size(), tag.engineVersion.data(),
                tag.engineVersion.size());
    put<uint64_t>(out, kHeaderHashOffset, headerHash(out.data(), out.size()));
    return out;
}

// Reads exactly `bytes`; a file that ends early is truncated (or shrank under us).
Status readExact(int fd, void* out, size_t bytes, const std::string& path) {
    auto* p = static_cast<uint8_t*>(out);
    while (bytes > 0) {
        const ssize_t got = ::read(fd, p, bytes);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return Status(ErrorCode::Io, path + ": cannot read: " + std::strerror(errno));
        if (got == 0) return Status(ErrorCode::InvalidFile, path + ": snapshot is truncated");
        p += got;
        bytes -= static_cast<size_t>(got);
    }
    return Status::ok();
}

Status writeAll(int fd, const void* data, size_t bytes) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (bytes > 0) {
        const ssize_t put = ::write(fd, p, std::min(bytes, kIoChunkBytes));
        if (put < 0 && errno == EINTR) continue;
        if (put < 0) return Status(ErrorCode::Io, std::strerror(errno));
        p += put;
        bytes -= static_cast<size_t>(put);
    }
    return Status::ok();
}

std::string mismatch(const char* what, const std::string& inFile, const char* ours, const std::string& expected) {
    return std::string("snapshot is ") + what + " (snapshot: " + inFile + ", " + ours + ": " + expected + ")";
}

Status compareTags(const SnapshotTag& got, const SnapshotTag& want, const std::string& path) {
    std::string why;
    if (got.modelFingerprint != want.modelFingerprint)
        why = mismatch("for another model file", got.modelFingerprint, "model", want.modelFingerprint);
    else if (got.engineVersion != want.engineVersion)
        why = mismatch("from another engine version", got.engineVersion, "engine", want.engineVersion);
    else if (got.kvStorage != want.kvStorage)
        why = mismatch("for another KV storage type", storageName(got.kvStorage), "cache", storageName(want.kvStorage));
    else if (got.layers != want.layers)
        why = mismatch("for another layer count", std::to_string(got.layers), "model", std::to_string(want.layers));
    else if (got.kvHeads != want.kvHeads)
        why = mismatch("for another KV head count", std::to_string(got.kvHeads), "model", std::to_string(want.kvHeads));
    else if (got.headDim != want.headDim)
        why = mismatch("for another head dimension", std::to_string(got.headDim), "model", std::to_string(want.headDim));
    return why.empty() ? Status::ok() : Status(ErrorCode::InvalidFile, path + ": " + why);
}

struct Opened {
    FileCloser file;
    uint64_t tokens = 0;
    uint64_t payloadBytes = 0;
    uint64_t dataHash = 0;
};

// Opens `path` and checks everything but the data checksum; the file offset is
// left at the first token.
Status openSnapshot(const std::string& path, const SnapshotTag& expected, Opened& out) {
    KESTREL_RETURN_IF_ERROR(checkTag(expected));
    out.file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (out.file.fd < 0) {
        const int err = errno;
        return Status(err == ENOENT ? ErrorCode::NotFound : ErrorCode::Io, path + ": cannot open: " + std::strerror(err));
    }
    struct stat st {};
    if (::fstat(out.file.fd, &st) != 0) return Status(ErrorCode::Io, path + ": cannot stat: " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return Status(ErrorCode::InvalidFile, path + ": not a regular file");
    const uint64_t fileBytes = static_cast<uint64_t>(st.st_size);
    auto corrupt = [&](const std::string& why) { return Status(ErrorCode::InvalidFile, path + ": " + why); };
    if (fileBytes < kFixedHeaderBytes)
        return corrupt("truncated or not a KV snapshot (" + std::to_string(fileBytes) + " bytes, the header alone is " +
                       std::to_string(kFixedHeaderBytes) + ")");

    std::vector<uint8_t> header(kFixedHeaderBytes);
    KESTREL_RETURN_IF_ERROR(readExact(out.file.fd, header.data(), header.size(), path));
    if (std::memcmp(header.data(), kMagic, sizeof kMagic) != 0) return corrupt("not a KV snapshot (bad magic)");
    const auto version = get<uint32_t>(header.data(), 4);
    if (version != kSnapshotFormatVersion)
        return corrupt("snapshot format version " + std::to_string(version) + "; this Kestrel reads version " +
                       std::to_string(kSnapshotFormatVersion));
    const auto headerBytes = get<uint32_t>(header.data(), 8);
    const auto fingerprintBytes = get<uint32_t>(header.data(), 12);
    const auto versionBytes = get<uint32_t>(header.data(), 16);
    if (fingerprintBytes > kSnapshotMaxTagStringBytes || versionBytes > kSnapshotMaxTagStringBytes ||
        headerBytes != uint64_t{kFixedHeaderBytes} + fingerprintBytes + versionBytes)
        return corrupt("corrupt snapshot header (inconsistent lengths)");
    if (headerBytes > fileBytes) return corrupt("snapshot is truncated inside its header");
    header.resize(headerBytes);
    KESTREL_RETURN_IF_ERROR(
        readExact(out.file.fd, header.data() + kFixedHeaderBytes, headerBytes - kFixedHeaderBytes, path));
    if (get<uint64_t>(header.data(), kHeaderHashOffset) != headerHash(header.data(), header.size()))
        return corrupt("corrupt snapshot header (checksum mismatch)");
    if (get<uint32_t>(header.data(), 36) != 0) return corrupt("corrupt snapshot header (reserved field set)");

    SnapshotTag tag;
    const char* strings = reinterpret_cast<const char*>(header.data() + kFixedHeaderBytes);
    tag.modelFingerprint.assign(strings, fingerprintBytes);
    tag.engineVersion.assign(strings + fingerprintBytes, versionBytes);
    tag.kvStorage = get<int32_t>(header.data(), 20);
    tag.layers = get<int32_t>(header.data(), 24);
    tag.kvHeads = get<int32_t>(header.data(), 28);
    tag.headDim = get<int32_t>(header.data(), 32);
    KESTREL_RETURN_IF_ERROR(compareTags(tag, expected, path));

    out.tokens = get<uint64_t>(header.data(), 40);
    out.payloadBytes = get<uint64_t>(header.data(), 48);
    out.dataHash = get<uint64_t>(header.data(), kDataHashOffset);
    const uint64_t rest = fileBytes - headerBytes;
    if (out.tokens > rest / sizeof(int32_t))
        return corrupt("snapshot is truncated (" + std::to_string(out.tokens) + " tokens do not fit in " +
                       std::to_string(fileBytes) + " bytes)");
    const uint64_t want = snapshotPayloadBytes(expected, static_cast<int64_t>(out.tokens));
    if (out.payloadBytes != want || (want == 0 && out.tokens > 0))
        return corrupt("snapshot payload is " + std::to_string(out.payloadBytes) + " bytes; " +
                       std::to_string(out.tokens) + " tokens need " + std::to_string(want));
    const uint64_t tokenBytes = out.tokens * sizeof(int32_t);
    if (out.payloadBytes != rest - tokenBytes)
        return corrupt(out.payloadBytes > rest - tokenBytes
                           ? "snapshot is truncated (" + std::to_string(fileBytes) + " of " +
                                 std::to_string(headerBytes + tokenBytes + out.payloadBytes) + " bytes)"
                           : "snapshot has " + std::to_string(rest - tokenBytes - out.payloadBytes) +
                                 " unexpected bytes after its payload");
    return Status::ok();
}

std::string hex64(uint64_t v) {
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(v));
    return out;
}

bool endsWith(const std::string& s, const char* suffix) {
    const size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

bool isSnapshotName(const std::string& name) {
    return name.size() == kKeyHexDigits + std::strlen(kExtension) && endsWith(name, kExtension) &&
           std::all_of(name.begin(), name.begin() + kKeyHexDigits,
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

int64_t nowNs() {
    timespec ts {};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

SnapshotTag makeSnapshotTag(std::string modelFingerprint, std::string engineVersion, const KvCacheSpec& spec) {
    SnapshotTag tag;
    tag.modelFingerprint = std::move(modelFingerprint);
    tag.engineVersion = std::move(engineVersion);
    tag.kvStorage = static_cast<int32_t>(spec.storage);
    tag.layers = spec.layers;
    tag.kvHeads = spec.kvHeads;
    tag.headDim = spec.headDim;
    return tag;
}

uint64_t snapshotPayloadBytes(const SnapshotTag& tag, int64_t tokens) {
    if (!layoutKnown(tag) || tokens < 0) return 0;
    // One position's row of one head: headDim <= 2^31 values, so this cannot overflow.
    uint64_t bytes = kvRowBytes(*knownStorage(tag.kvStorage), 1, tag.headDim) * 2;
    for (uint64_t factor : {uint64_t(tag.layers), uint64_t(tokens), uint64_t(tag.kvHeads)})
        if (__builtin_mul_overflow(bytes, factor, &bytes)) return 0;
    return bytes;
}

uint64_t snapshotFileBytes(const SnapshotTag& tag, int64_t tokens) {
    const uint64_t payload = snapshotPayloadBytes(tag, tokens);
    if (payload == 0 && tokens != 0) return 0;
    if (!layoutKnown(tag)) return 0;
    uint64_t bytes = headerBytesFor(tag) + static_cast<uint64_t>(tokens) * sizeof(int32_t);
    if (__builtin_add_overflow(bytes, payload, &bytes)) return 0;
    return bytes;
}

Status writeSnapshot(const std::string& path, const SnapshotTag& tag, std::span<const int32_t> tokens,
                     std::span<const uint8_t> kv) {
    KESTREL_RETURN_IF_ERROR(checkWriteArguments(tag, tokens, kv));
    Hasher data;
    data.add(tokens.data(), tokens.size_bytes());
    data.add(kv.data(), kv.size());
    const std::vector<uint8_t> header = encodeHeader(tag, tokens.size(), kv.size(), data.digest());

    static std::atomic<uint64_t> counter{0};
    const std::string temporary =
        path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
    FileCloser file;
    auto fail = [&](const std::string& step, const std::string& why) {
        if (file.fd >= 0) ::close(file.fd);
        file.fd = -1;
        ::unlink(temporary.c_str());
        return Status(ErrorCode::Io, "cannot write KV snapshot " + path + ": " + step + ": " + why);
    };
    file.fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (file.fd < 0) {
        const int err = errno;
        return Status(ErrorCode::Io, "cannot write KV snapshot " + path + ": cannot create " + temporary + ": " +
                                         std::strerror(err));
    }
    for (auto [bytes, size] : {std::pair<const void*, size_t>{header.data(), header.size()},
                               {tokens.data(), tokens.size_bytes()}, {kv.data(), kv.size()}}) {
        const Status written = writeAll(file.fd, bytes, size);
        if (!written) return fail("writing " + temporary, written.message());
    }
    if (::fsync(file.fd) != 0) return fail("flushing " + temporary, std::strerror(errno));
    const int closed = ::close(file.fd);
    file.fd = -1;
    if (closed != 0) return fail("closing " + temporary, std::strerror(errno));
    if (::rename(temporary.c_str(), path.c_str()) != 0) return fail("renaming " + temporary, std::strerror(errno));
    // Make the rename itself durable; a failure here loses at most this snapshot on a crash.
    const std::string folder = std::filesystem::path(path).parent_path().string();
    FileCloser dir{::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (dir.fd >= 0) ::fsync(dir.fd);
    return Status::ok();
}

Result<Snapshot> readSnapshot(const std::string& path, const SnapshotTag& expected) {
    Opened opened;
    KESTREL_RETURN_IF_ERROR(openSnapshot(path, expected, opened));
    Snapshot snapshot;
    try {
        snapshot.tokens.resize(opened.tokens);
        snapshot.kv.resize(opened.payloadBytes);
    } catch (const std::bad_alloc&) {
        return Status(ErrorCode::OutOfMemory, path + ": cannot allocate " + std::to_string(opened.payloadBytes >> 20) +
                                                  " MiB for the snapshot");
    }
    Hasher data;
    KESTREL_RETURN_IF_ERROR(readExact(opened.file.fd, snapshot.tokens.data(), opened.tokens * sizeof(int32_t), path));
    data.add(snapshot.tokens.data(), opened.tokens * sizeof(int32_t));
    for (uint64_t done = 0; done < opened.payloadBytes;) {
        const size_t chunk = static_cast<size_t>(std::min<uint64_t>(opened.payloadBytes - done, kIoChunkBytes));
        KESTREL_RETURN_IF_ERROR(readExact(opened.file.fd, snapshot.kv.data() + done, chunk, path));
        data.add(snapshot.kv.data() + done, chunk);
        done += chunk;
    }
    if (data.digest() != opened.dataHash)
        return Status(ErrorCode::InvalidFile, path + ": corrupt snapshot (tokens or KV checksum mismatch)");
    if (std::any_of(snapshot.tokens.begin(), snapshot.tokens.end(), [](int32_t t) { return t < 0; }))
        return Status(ErrorCode::InvalidFile, path + ": corrupt snapshot (negative token id)");
    return snapshot;
}

Result<int64_t> peekSnapshotTokens(const std::string& path, const SnapshotTag& expected) {
    Opened opened;
    KESTREL_RETURN_IF_ERROR(openSnapshot(path, expected, opened));
    return static_cast<int64_t>(opened.tokens);
}

SnapshotStore::SnapshotStore(std::string folder, uint64_t maxBytes) : folder_(std::move(folder)), maxBytes_(maxBytes) {
    removeStaleTemporaries();
    for (const Entry& e : list()) lastStampNs_ = std::max(lastStampNs_, e.mtimeNs);
}

std::string SnapshotStore::pathFor(const std::string& key) const {
    const XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
    return folder_ + "/" + hex64(h.high64) + hex64(h.low64) + kExtension;
}

std::vector<SnapshotStore::Entry> SnapshotStore::list() const {
    std::vector<Entry> entries;
    DIR* dir = ::opendir(folder_.c_str());
    if (!dir) return entries;
    while (const dirent* d = ::readdir(dir)) {
        const std::string name = d->d_name;
        struct stat st {};
        if (!isSnapshotName(name) || ::fstatat(::dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        entries.push_back({folder_ + "/" + name, static_cast<uint64_t>(st.st_size),
                           static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec});
    }
    ::closedir(dir);
    return entries;
}

// A crash between create and rename leaves "<hash>.ksnp.tmp.<pid>.<n>"; no
// other process writes this folder (one store per folder), so none is live.
void SnapshotStore::removeStaleTemporaries() const {
    DIR* dir = ::opendir(folder_.c_str());
    if (!dir) return;
    while (const dirent* d = ::readdir(dir)) {
        const std::string name = d->d_name;
        const size_t marker = name.find(kTemporaryMarker);
        if (marker == kKeyHexDigits && isSnapshotName(name.substr(0, kKeyHexDigits) + kExtension))
            ::unlinkat(::dirfd(dir), d->d_name, 0);
    }
    ::closedir(dir);
}

// Last use is the modification time, made strictly increasing so that two uses
// within one tick of a coarse file-system clock still order.
void SnapshotStore::touch(const std::string& path) {
    lastStampNs_ = std::max(nowNs(), lastStampNs_ + 1);
    const timespec times[2] = {{0, UTIME_OMIT}, {lastStampNs_ / 1000000000, lastStampNs_ % 1000000000}};
    ::utimensat(AT_FDCWD, path.c_str(), times, 0);
}

Status SnapshotStore::dropIfInvalid(const Status& status, const std::string& path) {
    if (status.code() != ErrorCode::InvalidFile || ::unlink(path.c_str()) != 0) return status;
    return Status(status.code(), status.message() + "; removed it");
}

Status SnapshotStore::save(const std::string& key, const SnapshotTag& tag, std::span<const int32_t> tokens,
                           std::span<const uint8_t> kv) {
    KESTREL_RETURN_IF_ERROR(checkWriteArguments(tag, tokens, kv));
    const uint64_t bytes = snapshotFileBytes(tag, static_cast<int64_t>(tokens.size()));
    if (bytes > maxBytes_)
        return Status(ErrorCode::InvalidArgument, "KV snapshot of " + std::to_string(bytes) +
                                                      " bytes is larger than the snapshot folder's limit of " +
                                                      std::to_string(maxBytes_) + " bytes (" + folder_ + ")");
    std::error_code ec;
    std::filesystem::create_directories(folder_, ec);
    if (ec) return Status(ErrorCode::Io, "cannot create the snapshot folder " + folder_ + ": " + ec.message());

    const std::string target = pathFor(key);
    std::vector<Entry> others = list();
    std::erase_if(others, [&](const Entry& e) { return e.path == target; });
    std::sort(others.begin(), others.end(),
              [](const Entry& a, const Entry& b) { return std::tie(a.mtimeNs, a.path) < std::tie(b.mtimeNs, b.path); });
    uint64_t kept = 0;
    for (const Entry& e : others) kept += e.bytes;
    for (const Entry& e : others) {
        if (kept + bytes <= maxBytes_) break;
        if (::unlink(e.path.c_str()) != 0 && errno != ENOENT)
            return Status(ErrorCode::Io, "cannot evict KV snapshot " + e.path + ": " + std::strerror(errno));
        kept -= e.bytes;
    }
    KESTREL_RETURN_IF_ERROR(writeSnapshot(target, tag, tokens, kv));
    touch(target);
    return Status::ok();
}

Result<Snapshot> SnapshotStore::load(const std::string& key, const SnapshotTag& expected) {
    const std::string path = pathFor(key);
    Result<Snapshot> snapshot = readSnapshot(path, expected);
    if (!snapshot) return dropIfInvalid(snapshot.status(), path);
    touch(path);
    return snapshot;
}

Result<int64_t> SnapshotStore::peekTokens(const std::string& key, const SnapshotTag& expected) {
    const std::string path = pathFor(key);
    Result<int64_t> tokens = peekSnapshotTokens(path, expected);
    if (!tokens) return dropIfInvalid(tokens.status(), path);
    return tokens;
}

void SnapshotStore::remove(const std::string& key) { ::unlink(pathFor(key).c_str()); }

uint64_t SnapshotStore::totalBytes() const {
    uint64_t total = 0;
    for (const Entry& e : list()) total += e.bytes;
    return total;
}

}  // namespace kestrel::runtime
