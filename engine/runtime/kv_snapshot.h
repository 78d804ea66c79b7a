// On-disk snapshots of a conversation's tokens and their KV, so that reopening a
// conversation (or restarting the app) restores its cache instead of prefilling
// it again.
//
// This layer moves bytes: the caller gathers the KV of positions [0, n) into one
// payload (layer-major: for each layer K then V, each n x kvHeads x headDim
// elements in the cache's storage type) and scatters it back after a load. The
// payload is opaque here; only its size is checked against the tag.
//
// File layout (little-endian; the payload is in host order, and Kestrel builds
// only for little-endian hosts):
//   offset  0  magic "KSNP"
//           4  u32 format version (kSnapshotFormatVersion)
//           8  u32 header bytes (72 + both strings): where the tokens start
//          12  u32 model fingerprint bytes   16  u32 engine version bytes
//          20  i32 kv storage   24 i32 layers   28 i32 kv heads   32 i32 head dim
//          36  u32 reserved (0)
//          40  u64 token count  48  u64 payload bytes
//          56  u64 XXH3-64 of the header: bytes [0, 56) then [64, header bytes)
//          64  u64 XXH3-64 of the token bytes followed by the payload
//          72  model fingerprint, engine version (no terminators)
//   then token count x i32 tokens, then the payload; nothing after it.
//
// A reader trusts nothing before it is checked: the header checksum precedes
// every use of a header field, lengths are checked against the file size before
// anything is allocated, and the data checksum is verified while reading.
//
// Thread-safety: the free functions are safe to call concurrently on different
// paths. A SnapshotStore is used from one thread at a time, one per folder per
// process.
#pragma once

#include "kestrel/status.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace kestrel::runtime {

struct KvCacheSpec;

constexpr uint32_t kSnapshotFormatVersion = 1;
constexpr uint32_t kSnapshotMaxTagStringBytes = 4096;  // per string of the tag

// What a snapshot must match to be trusted. Any field differing = foreign snapshot.
struct SnapshotTag {
    std::string modelFingerprint;   // modelFingerprint(path) of the GGUF file, hex
    std::string engineVersion;      // kestrel engine version + KV layout version string
    int32_t kvStorage = 0;          // KvStorage as int (F32=0, F16=1, Q8=2; see kv_cache.h)
    int32_t layers = 0, kvHeads = 0, headDim = 0;

    bool operator==(const SnapshotTag&) const = default;
};

// The tag of a cache with `spec`'s geometry and storage.
SnapshotTag makeSnapshotTag(std::string modelFingerprint, std::string engineVersion, const KvCacheSpec& spec);

// A snapshot as read back; the caller owns it.
struct Snapshot {
    std::vector<int32_t> tokens;    // the conversation's tokens, position by position
    std::vector<uint8_t> kv;        // opaque payload; size equals snapshotPayloadBytes(tag, tokens.size())
};

// Bytes of the payload for n tokens: layers x 2 (K, V) x n x kvHeads x headDim x
// element size (2 for F16, 4 for F32). 0 when the tag is invalid (unknown
// storage, a dimension <= 0, n < 0) or the product does not fit 64 bits; the
// writer and reader refuse such tags with an error.
uint64_t snapshotPayloadBytes(const SnapshotTag& tag, int64_t tokens);
// Bytes of the whole file (header + tokens + payload); 0 under the same conditions.
uint64_t snapshotFileBytes(const SnapshotTag& tag, int64_t tokens);

// Writes atomically (a temporary file in the same folder, fsync, rename), so a
// crash or a full disk never leaves a half-written file under `path`; an older
// file under `path` stays intact on failure. On failure the temporary file is
// removed and the message names the path and the reason. Refuses (InvalidArgument)
// an invalid tag, negative tokens, or a payload whose size is not
// snapshotPayloadBytes(tag, tokens.size()).
Status writeSnapshot(const std::string& path, const SnapshotTag& tag, std::span<const int32_t> tokens,
                     std::span<const uint8_t> kv);

// Reads and validates a whole snapshot. Errors: NotFound (no file), InvalidFile
// (corrupt, truncated, from another format version, or foreign: the message
// names the differing tag field, e.g. "snapshot is for another model file"),
// Io (the system refused a read), OutOfMemory.
Result<Snapshot> readSnapshot(const std::string& path, const SnapshotTag& expected);

// The token count of a snapshot, checking header, tag and file size but not
// reading the tokens or payload: to decide between restoring and prefilling.
// A later readSnapshot can still fail on the data checksum.
Result<int64_t> peekSnapshotTokens(const std::string& path, const SnapshotTag& expected);

// A folder of snapshots keyed by the caller's string (a conversation id),
// bounded in total bytes. save() evicts the least recently used other snapshots
// until the new one fits; "used" is a save or a successful load, recorded as
// the file's modification time (strictly increasing within the store, so order
// survives coarse clocks and restarts). Keys may hold any bytes: file names are
// a 128-bit hash of the key. Leftover temporary files from a crash are removed
// when the store is created. Files other than <hash>.ksnp are left alone.
class SnapshotStore {
public:
    SnapshotStore(std::string folder, uint64_t maxBytes);

    // Creates the folder if needed. A snapshot larger than the bound is refused
    // (InvalidArgument) and nothing is evicted.
    Status save(const std::string& key, const SnapshotTag& tag, std::span<const int32_t> tokens,
                std::span<const uint8_t> kv);
    // A corrupt or foreign snapshot is removed and its error returned.
    Result<Snapshot> load(const std::string& key, const SnapshotTag& expected);
    // Like load, without reading the data; a corrupt or foreign header is removed too.
    Result<int64_t> peekTokens(const std::string& key, const SnapshotTag& expected);
    void remove(const std::string& key);

    uint64_t totalBytes() const;  // of the snapshot files in the folder now
    uint64_t maxBytes() const { return maxBytes_; }
    const std::string& folder() const { return folder_; }
    std::string pathFor(const std::string& key) const;

private:
    struct Entry {
        std::string path;
        uint64_t bytes = 0;
        int64_t mtimeNs = 0;
    };
    std::vector<Entry> list() const;
    void removeStaleTemporaries() const;
    void touch(const std::string& path);
    Status dropIfInvalid(const Status& status, const std::string& path);  // removes corrupt/foreign files

    std::string folder_;
    uint64_t maxBytes_ = 0;
    int64_t lastStampNs_ = 0;  // the newest modification time this store has set or seen
};

}  // namespace kestrel::runtime
