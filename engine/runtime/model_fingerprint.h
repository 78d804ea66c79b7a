// A fingerprint of a model file that is cheap for a multi-GB GGUF: XXH3-64 over
// the file size, the first and last 8 MiB and 64 evenly spaced 64 KiB chunks of
// the rest (a file of at most 20 MiB is hashed whole). The GGUF header, metadata
// and tensor table sit in the first MiBs, so any change to them changes the
// fingerprint, as does a change to a sampled chunk; a change elsewhere in the
// tensor data may not. It identifies a file's content for KV snapshots, not
// against tampering.
//
// Thread-safety: stateless; safe to call from any thread.
#pragma once

#include "kestrel/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kestrel::runtime {

// Names the sampling scheme; a change of scheme changes the prefix.
constexpr const char* kModelFingerprintPrefix = "xxh3s1-";

struct FileRange {
    uint64_t offset = 0;
    uint64_t bytes = 0;
};

// The ranges the fingerprint of a file of `fileSize` bytes covers, ascending and disjoint.
std::vector<FileRange> modelFingerprintRanges(uint64_t fileSize);

// "xxh3s1-" + 16 lowercase hex digits. NotFound for a missing file, Io when it cannot be read.
Result<std::string> modelFingerprint(const std::string& path);

}  // namespace kestrel::runtime
