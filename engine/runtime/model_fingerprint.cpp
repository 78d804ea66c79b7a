#include "model_fingerprint.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kestrel::runtime {

namespace {

constexpr uint64_t kEdgeBytes = 8ull << 20;
constexpr uint64_t kChunkBytes = 64ull << 10;
constexpr uint64_t kChunks = 64;
constexpr size_t kReadBytes = 1u << 20;

struct FileCloser {
    int fd;
    ~FileCloser() { ::close(fd); }
};


}  // namespace

std::vector<FileRange> modelFingerprintRanges(uint64_t fileSize) {
    if (fileSize <= 2 * kEdgeBytes + kChunks * kChunkBytes) return {{0, fileSize}};
    std::vector<FileRange> ranges;
    ranges.push_back({0, kEdgeBytes});
    // The middle is longer than kChunks chunks, so the spacing is at least one
    // chunk: the chunks never overlap, the first starts where the head ends and
    // the last ends where the tail starts.
    const uint64_t middle = fileSize - 2 * kEdgeBytes;
    for (uint64_t i = 0; i < kChunks; ++i)
        ranges.push_back({kEdgeBytes + i * (middle - kChunkBytes) / (kChunks - 1), kChunkBytes});
    ranges.push_back({fileSize - kEdgeBytes, kEdgeBytes});
    return ranges;
}

Result<std::string> modelFingerprint(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        return Status(err == ENOENT ? ErrorCode::NotFound : ErrorCode::Io,
                      path + ": cannot open for fingerprinting: " + std::strerror(err));
    }
    const FileCloser closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Status(ErrorCode::Io, path + ": cannot stat: " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return Status(ErrorCode::InvalidArgument, path + ": not a regular file");
    const uint64_t size = static_cast<uint64_t>(st.st_size);

    XXH3_state_t state;
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    unsigned char sizeBytes[8];
    for (int i = 0; i < 8; ++i) sizeBytes[i] = static_cast<unsigned char>(size >> (8 * i));
    XXH3_64bits_update(&state, sizeBytes, sizeof sizeBytes);

    std::vector<unsigned char> buffer(kReadBytes);
    for (const FileRange& r : modelFingerprintRanges(size)) {
        for (uint64_t done = 0; done < r.bytes;) {
            const size_t want = static_cast<size_t>(std::min<uint64_t>(r.bytes - done, buffer.size()));
            const ssize_t got = ::pread(fd, buffer.data(), want, static_cast<off_t>(r.offset + done));
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) return Status(ErrorCode::Io, path + ": cannot read: " + std::strerror(errno));
            if (got == 0) return Status(ErrorCode::Io, path + ": the file shrank while it was fingerprinted");
            XXH3_64bits_update(&state, buffer.data(), static_cast<size_t>(got));
            done += static_cast<uint64_t>(got);
        }
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(XXH3_64bits_digest(&state)));
    return std::string(kModelFingerprintPrefix) + hex;
}

}  // namespace kestrel::runtime
