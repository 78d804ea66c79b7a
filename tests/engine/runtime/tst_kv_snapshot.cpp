// KV snapshots: exact round trips, hostile files rejected (never trusted, never
// a crash), atomic writes, a bounded LRU folder, and the model fingerprint.
#include "runtime/kv_snapshot.h"
#include "runtime/model_fingerprint.h"

#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sys/resource.h>
#include <unistd.h>

// Only to re-seal deliberately hostile headers with a valid checksum.
#define XXH_INLINE_ALL
#include <xxhash.h>

using namespace kestrel;
using namespace kestrel::runtime;

namespace {

using Bytes = std::vector<uint8_t>;

SnapshotTag smallTag() {
    SnapshotTag tag;
    tag.modelFingerprint = "xxh3s1-0123456789abcdef";
    tag.engineVersion = "kestrel-0.1.0/kv1";
    tag.kvStorage = 0;  // F32
    tag.layers = 1;
    tag.kvHeads = 1;
    tag.headDim = 2;
    return tag;
}

SnapshotTag modelTag() {
    SnapshotTag tag = smallTag();
    tag.kvStorage = 1;  // F16
    tag.layers = 3;
    tag.kvHeads = 2;
    tag.headDim = 8;
    return tag;
}

SnapshotTag int8Tag() {
    SnapshotTag tag = modelTag();
    tag.kvStorage = 2;  // Q8: codes and a float scale per 32 values
    tag.headDim = 64;
    return tag;
}

struct Data {
    std::vector<int32_t> tokens;
    Bytes kv;
};

Data randomData(const SnapshotTag& tag, int n, uint32_t seed) {
    std::mt19937 rng(seed);
    Data d;
    for (int i = 0; i < n; ++i) d.tokens.push_back(static_cast<int32_t>(rng() % 50000));
    d.kv.resize(snapshotPayloadBytes(tag, n));
    for (auto& b : d.kv) b = static_cast<uint8_t>(rng());
    return d;
}

Bytes readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const std::string& path, const Bytes& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

bool exists(const std::string& path) { return std::filesystem::exists(path); }

size_t filesIn(const std::string& folder) {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(folder)) ++n;
    return n;
}

// The header checksum covers [0, 56) and [64, header bytes); see kv_snapshot.h.
void reseal(Bytes& file) {
    uint32_t headerBytes;
    std::memcpy(&headerBytes, file.data() + 8, 4);
    headerBytes = std::min<uint32_t>(headerBytes, static_cast<uint32_t>(file.size()));
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, file.data(), 56);
    XXH3_64bits_update(&st, file.data() + 64, headerBytes - 64);
    const uint64_t h = XXH3_64bits_digest(&st);
    std::memcpy(file.data() + 56, &h, 8);
}

template <typename T>
void poke(Bytes& file, size_t offset, T value) {
    std::memcpy(file.data() + offset, &value, sizeof value);
}

bool contains(const Status& s, const char* text) { return s.message().find(text) != std::string::npos; }

}  // namespace

class TstKvSnapshot : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string path(const char* name) const { return dir_.filePath(name).toStdString(); }

    // A small valid snapshot file, for the corruption tests.
    Bytes smallFile(const std::string& at) {
        const Data d = randomData(smallTag(), 3, 7);
        if (!writeSnapshot(at, smallTag(), d.tokens, d.kv)) return {};
        return readFile(at);
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void payloadBytesFollowTheGeometry() {
        QCOMPARE(snapshotPayloadBytes(modelTag(), 10), uint64_t{3 * 2 * 10 * 2 * 8 * 2});
        QCOMPARE(snapshotPayloadBytes(smallTag(), 5), uint64_t{1 * 2 * 5 * 1 * 2 * 4});
        QCOMPARE(snapshotPayloadBytes(int8Tag(), 10), uint64_t{3 * 2 * 10 * 2 * (64 + 2 * 4)});
        SnapshotTag ragged = int8Tag();  // 8-bit rows are whole 32-value blocks
        ragged.headDim = 48;
        QCOMPARE(snapshotPayloadBytes(ragged, 10), uint64_t{0});
        QCOMPARE(snapshotFileBytes(ragged, 10), uint64_t{0});
        SnapshotTag bad = modelTag();
        bad.kvStorage = 7;
        QCOMPARE(snapshotPayloadBytes(bad, 10), uint64_t{0});
        SnapshotTag huge = modelTag();
        huge.layers = huge.kvHeads = huge.headDim = 1 << 30;
        QCOMPARE(snapshotPayloadBytes(huge, int64_t{1} << 40), uint64_t{0});  // overflow, not a wrapped size
    }

    void roundTripIsExact() {
        for (const SnapshotTag& tag : {modelTag(), smallTag(), int8Tag()}) {
            for (int n : {37, 0}) {
                const Data d = randomData(tag, n, 42 + n);
                const std::string p = path("round.ksnp");
                const Status w = writeSnapshot(p, tag, d.tokens, d.kv);
                QVERIFY2(w.isOk(), w.toString().c_str());
                QCOMPARE(static_cast<uint64_t>(std::filesystem::file_size(p)), snapshotFileBytes(tag, n));
                auto r = readSnapshot(p, tag);
                QVERIFY2(r.isOk(), r.status().toString().c_str());
                QVERIFY(r->tokens == d.tokens);
                QVERIFY(r->kv == d.kv);
                auto peeked = peekSnapshotTokens(p, tag);
                QVERIFY(peeked.isOk());
                QCOMPARE(*peeked, int64_t{n});
            }
        }
    }

    void missingFileIsNotFound() {
        auto r = readSnapshot(path("absent.ksnp"), modelTag());
        QCOMPARE(r.status().code(), ErrorCode::NotFound);
        QCOMPARE(peekSnapshotTokens(path("absent.ksnp"), modelTag()).status().code(), ErrorCode::NotFound);
    }

    void everyTruncationIsRejected() {
        const Bytes full = smallFile(path("full.ksnp"));
        QVERIFY(full.size() > 72);
        const std::string p = path("truncated.ksnp");
        for (size_t len = 0; len < full.size(); ++len) {
            writeFile(p, Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len)));
            const auto r = readSnapshot(p, smallTag());
            QVERIFY2(!r.isOk(), qPrintable(QString("prefix of %1 bytes accepted").arg(len)));
            QCOMPARE(r.status().code(), ErrorCode::InvalidFile);
            QCOMPARE(peekSnapshotTokens(p, smallTag()).status().code(), ErrorCode::InvalidFile);
        }
        writeFile(p, full);
        QVERIFY(readSnapshot(p, smallTag()).isOk());
    }

    void randomByteFlipsAreRejected() {
        const Bytes full = smallFile(path("flips.ksnp"));
        QVERIFY(!full.empty());
        const std::string p = path("flipped.ksnp");
        std::mt19937 rng(2024);
        for (int i = 0; i < 200; ++i) {
            Bytes bad = full;
            const size_t at = rng() % bad.size();
            bad[at] ^= static_cast<uint8_t>(1 + rng() % 255);
            writeFile(p, bad);
            const auto r = readSnapshot(p, smallTag());
            QVERIFY2(!r.isOk(), qPrintable(QString("flip at byte %1 accepted").arg(at)));
            QCOMPARE(r.status().code(), ErrorCode::InvalidFile);
        }
    }

    void trailingBytesAreRejected() {
        Bytes file = smallFile(path("trailing.ksnp"));
        file.push_back(0);
        writeFile(path("trailing.ksnp"), file);
        const auto r = readSnapshot(path("trailing.ksnp"), smallTag());
        QCOMPARE(r.status().code(), ErrorCode::InvalidFile);
        QVERIFY2(contains(r.status(), "after its payload"), r.status().message().c_str());
    }

    // Lengths that pass the header checksum but not the file size: rejected
    // before anything is allocated from them.
    void hostileLengthsAreRejected() {
        const Bytes full = smallFile(path("hostile.ksnp"));
        QVERIFY(!full.empty());
        const std::string p = path("hostile2.ksnp");
        struct Case {
            size_t offset;
            uint64_t value;
            int width;
            const char* phrase;
        };
        const Case cases[] = {
            {40, uint64_t{1} << 60, 8, "truncated"},          // token count
            {40, 2, 8, "payload"},                            // fewer tokens than the payload holds
            {48, uint64_t{1} << 62, 8, "payload"},            // payload bytes
            {12, 0xffffffffu, 4, "inconsistent lengths"},     // fingerprint length
            {8, 0x7fffffffu, 4, "inconsistent lengths"},      // header bytes
        };
        for (const Case& c : cases) {
            Bytes bad = full;
            if (c.width == 8) poke<uint64_t>(bad, c.offset, c.value);
            else poke<uint32_t>(bad, c.offset, static_cast<uint32_t>(c.value));
            reseal(bad);
            writeFile(p, bad);
            const auto r = readSnapshot(p, smallTag());
            QCOMPARE(r.status().code(), ErrorCode::InvalidFile);
            QVERIFY2(contains(r.status(), c.phrase), r.status().message().c_str());
        }
    }

    void foreignTagIsRejectedNamingTheField_data() {
        QTest::addColumn<int>("field");
        QTest::addColumn<QByteArray>("phrase");
        QTest::newRow("fingerprint") << 0 << QByteArray("another model file");
        QTest::newRow("engine version") << 1 << QByteArray("another engine version");
        QTest::newRow("kv storage") << 2 << QByteArray("another KV storage type");
        QTest::newRow("layers") << 3 << QByteArray("another layer count");
        QTest::newRow("kv heads") << 4 << QByteArray("another KV head count");
        QTest::newRow("head dim") << 5 << QByteArray("another head dimension");
    }

    void foreignTagIsRejectedNamingTheField() {
        QFETCH(int, field);
        QFETCH(QByteArray, phrase);
        const Data d = randomData(modelTag(), 5, 3);
        const std::string p = path("foreign.ksnp");
        QVERIFY(writeSnapshot(p, modelTag(), d.tokens, d.kv).isOk());
        SnapshotTag other = modelTag();
        switch (field) {
            case 0: other.modelFingerprint = "xxh3s1-fedcba9876543210"; break;
            case 1: other.engineVersion = "kestrel-0.2.0/kv1"; break;
            case 2: other.kvStorage = 0; break;
            case 3: other.layers = 4; break;
            case 4: other.kvHeads = 1; break;
            default: other.headDim = 16; break;
        }
        for (const Status& s : {readSnapshot(p, other).status(), peekSnapshotTokens(p, other).status()}) {
            QCOMPARE(s.code(), ErrorCode::InvalidFile);
            QVERIFY2(contains(s, phrase.constData()), s.message().c_str());
            QVERIFY2(contains(s, p.c_str()), s.message().c_str());
        }
    }

    void invalidWritesAreRefused() {
        const Data d = randomData(modelTag(), 4, 5);
        const std::string p = path("refused.ksnp");
        for (size_t size : {d.kv.size() - 1, d.kv.size() + 1}) {
            Bytes kv(size);
            const Status s = writeSnapshot(p, modelTag(), d.tokens, kv);
            QCOMPARE(s.code(), ErrorCode::InvalidArgument);
            QVERIFY(!exists(p));
        }
        std::vector<int32_t> negative = d.tokens;
        negative[2] = -1;
        QCOMPARE(writeSnapshot(p, modelTag(), negative, d.kv).code(), ErrorCode::InvalidArgument);
        SnapshotTag bad = modelTag();
        bad.kvStorage = 9;
        QCOMPARE(writeSnapshot(p, bad, d.tokens, d.kv).code(), ErrorCode::InvalidArgument);
        QVERIFY(!exists(p));
    }

    void unwritableFolderGivesAnErrorAndNoFile() {
        const Data d = randomData(modelTag(), 4, 6);
        const std::string missing = path("no-such-folder/x.ksnp");
        Status s = writeSnapshot(missing, modelTag(), d.tokens, d.kv);
        QCOMPARE(s.code(), ErrorCode::Io);
        QVERIFY2(contains(s, missing.c_str()), s.message().c_str());
        QVERIFY(!exists(missing));

        writeFile(path("a-file"), {1});
        const std::string underFile = path("a-file/x.ksnp");
        QCOMPARE(writeSnapshot(underFile, modelTag(), d.tokens, d.kv).code(), ErrorCode::Io);

        // Permission bits stop everyone but root; as root the two cases above stand in.
        const std::string locked = path("locked");
        std::filesystem::create_directory(locked);
        std::filesystem::permissions(locked, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
        if (::access(locked.c_str(), W_OK) != 0) {
            s = writeSnapshot(locked + "/x.ksnp", modelTag(), d.tokens, d.kv);
            QCOMPARE(s.code(), ErrorCode::Io);
            QCOMPARE(filesIn(locked), size_t{0});
        }
        std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
    }

    // A write that fails part-way (here: the file-size limit, as a full disk
    // would) leaves the previous snapshot intact and no temporary file.
    void failedWriteKeepsThePreviousSnapshot() {
        const std::string folder = path("atomic");
        std::filesystem::create_directory(folder);
        const std::string p = folder + "/conv.ksnp";
        const Data old = randomData(modelTag(), 2, 8);
        QVERIFY(writeSnapshot(p, modelTag(), old.tokens, old.kv).isOk());
        const Data big = randomData(modelTag(), 200, 9);  // 38 KB

        rlimit saved {};
        QVERIFY(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
        const auto previousHandler = std::signal(SIGXFSZ, SIG_IGN);
        rlimit limited = saved;
        limited.rlim_cur = 8192;
        QVERIFY(::setrlimit(RLIMIT_FSIZE, &limited) == 0);
        const Status s = writeSnapshot(p, modelTag(), big.tokens, big.kv);
        ::setrlimit(RLIMIT_FSIZE, &saved);
        std::signal(SIGXFSZ, previousHandler);

        QCOMPARE(s.code(), ErrorCode::Io);
        QVERIFY2(contains(s, p.c_str()), s.message().c_str());
        QCOMPARE(filesIn(folder), size_t{1});
        auto r = readSnapshot(p, modelTag());
        QVERIFY(r.isOk());
        QVERIFY(r->tokens == old.tokens);
        QVERIFY(r->kv == old.kv);
    }

    void storeEvictsTheLeastRecentlyUsed() {
        const std::string folder = path("store-lru");
        const SnapshotTag tag = modelTag();
        const uint64_t one = snapshotFileBytes(tag, 10);
        const uint64_t bound = 3 * one + one / 2;
        const Data d = randomData(tag, 10, 10);
        auto present = [&](SnapshotStore& s, const char* key) { return s.peekTokens(key, tag).isOk(); };
        {
            SnapshotStore store(folder, bound);
            for (const char* key : {"a", "b", "c"}) QVERIFY(store.save(key, tag, d.tokens, d.kv).isOk());
            QCOMPARE(store.totalBytes(), 3 * one);
            QVERIFY(store.load("a", tag).isOk());  // a is now newer than b and c
            QVERIFY(store.save("d", tag, d.tokens, d.kv).isOk());
            QVERIFY(!present(store, "b"));
            QVERIFY(present(store, "a") && present(store, "c") && present(store, "d"));
            QVERIFY(store.totalBytes() <= bound);

            QVERIFY(store.load("c", tag).isOk());  // order now: a, d, c
            QVERIFY(store.save("e", tag, d.tokens, d.kv).isOk());
            QVERIFY(!present(store, "a"));
            QVERIFY(present(store, "c") && present(store, "d") && present(store, "e"));

            QVERIFY(store.save("d", tag, d.tokens, d.kv).isOk());  // replacing evicts nothing; order: c, e, d
            QVERIFY(present(store, "c") && present(store, "e"));
            QCOMPARE(store.totalBytes(), 3 * one);
        }
        SnapshotStore reopened(folder, bound);  // the order survives a restart
        QVERIFY(reopened.save("f", tag, d.tokens, d.kv).isOk());
        QVERIFY(!present(reopened, "c"));
        QVERIFY(present(reopened, "e") && present(reopened, "d") && present(reopened, "f"));
        QVERIFY(reopened.totalBytes() <= bound);
    }

    void storeRefusesASnapshotLargerThanItsBound() {
        const SnapshotTag tag = modelTag();
        SnapshotStore store(path("store-bound"), snapshotFileBytes(tag, 10));
        const Data fits = randomData(tag, 10, 11);
        QVERIFY(store.save("small", tag, fits.tokens, fits.kv).isOk());
        const Data big = randomData(tag, 11, 12);
        const Status s = store.save("big", tag, big.tokens, big.kv);
        QCOMPARE(s.code(), ErrorCode::InvalidArgument);
        QVERIFY2(contains(s, "larger than"), s.message().c_str());
        QVERIFY(store.load("small", tag).isOk());  // nothing evicted for a refused snapshot
        QVERIFY(!exists(store.pathFor("big")));
    }

    void storeRemovesCorruptAndForeignSnapshots() {
        const SnapshotTag tag = modelTag();
        SnapshotStore store(path("store-corrupt"), 1 << 20);
        const Data d = randomData(tag, 6, 13);

        QVERIFY(store.save("corrupt", tag, d.tokens, d.kv).isOk());
        Bytes file = readFile(store.pathFor("corrupt"));
        file[file.size() - 3] ^= 0x10;
        writeFile(store.pathFor("corrupt"), file);
        QVERIFY(store.peekTokens("corrupt", tag).isOk());  // the payload is not read by a peek
        auto r = store.load("corrupt", tag);
        QCOMPARE(r.status().code(), ErrorCode::InvalidFile);
        QVERIFY(!exists(store.pathFor("corrupt")));
        QCOMPARE(store.load("corrupt", tag).status().code(), ErrorCode::NotFound);

        QVERIFY(store.save("foreign", tag, d.tokens, d.kv).isOk());
        SnapshotTag other = tag;
        other.modelFingerprint = "xxh3s1-ffffffffffffffff";
        r = store.load("foreign", other);
        QVERIFY2(contains(r.status(), "another model file"), r.status().message().c_str());
        QVERIFY(!exists(store.pathFor("foreign")));

        QVERIFY(store.save("truncated", tag, d.tokens, d.kv).isOk());
        std::filesystem::resize_file(store.pathFor("truncated"), 40);
        QCOMPARE(store.peekTokens("truncated", tag).status().code(), ErrorCode::InvalidFile);
        QVERIFY(!exists(store.pathFor("truncated")));
        QCOMPARE(store.totalBytes(), uint64_t{0});
    }

    void storeKeysMayHoldAnyBytes() {
        const SnapshotTag tag = smallTag();
        const std::string folder = path("store-keys");
        SnapshotStore store(folder, 1 << 20);
        const std::string keys[] = {"../../etc/passwd", std::string("a\0b", 3), std::string("a\0c", 3), "", "ü/\\:*"};
        for (size_t i = 0; i < std::size(keys); ++i) {
            const std::string p = store.pathFor(keys[i]);
            QCOMPARE(std::filesystem::path(p).parent_path().string(), folder);
            const Data d = randomData(tag, static_cast<int>(i) + 1, static_cast<uint32_t>(i));
            QVERIFY(store.save(keys[i], tag, d.tokens, d.kv).isOk());
        }
        QCOMPARE(filesIn(folder), std::size(keys));
        for (size_t i = 0; i < std::size(keys); ++i) {
            auto r = store.load(keys[i], tag);
            QVERIFY(r.isOk());
            QCOMPARE(r->tokens.size(), i + 1);
        }
        store.remove(keys[1]);
        QCOMPARE(store.load(keys[1], tag).status().code(), ErrorCode::NotFound);
        QVERIFY(store.load(keys[2], tag).isOk());
    }

    void storeRemovesTemporariesLeftByACrash() {
        const std::string folder = path("store-crash");
        std::filesystem::create_directory(folder);
        const std::string leftover = SnapshotStore(folder, 1 << 20).pathFor("k") + ".tmp.4242.0";
        const std::string unrelated = folder + "/notes.txt";
        writeFile(leftover, {1, 2, 3});
        writeFile(unrelated, {4});
        SnapshotStore store(folder, 1 << 20);
        QVERIFY(!exists(leftover));
        QVERIFY(exists(unrelated));
        QCOMPARE(store.totalBytes(), uint64_t{0});  // only snapshot files count
    }

    void fingerprintSamplesABoundedPartOfTheFile() {
        const auto small = modelFingerprintRanges(1000);
        QCOMPARE(small.size(), size_t{1});
        QCOMPARE(small[0].bytes, uint64_t{1000});
        const uint64_t size = uint64_t{4} << 30;
        const auto ranges = modelFingerprintRanges(size);
        QCOMPARE(ranges.size(), size_t{66});
        uint64_t total = 0, end = 0;
        for (const FileRange& r : ranges) {
            QVERIFY(r.offset >= end);  // ascending, disjoint
            end = r.offset + r.bytes;
            total += r.bytes;
        }
        QCOMPARE(end, size);
        QCOMPARE(total, uint64_t{20} << 20);
    }

    void fingerprintChangesWithTheHeadTailAndSampledChunks() {
        const std::string p = path("model.gguf");
        const uint64_t size = (uint64_t{24} << 20) + 12345;
        Bytes model(size);
        std::mt19937 rng(99);
        for (auto& b : model) b = static_cast<uint8_t>(rng());
        writeFile(p, model);

        const auto first = modelFingerprint(p);
        QVERIFY2(first.isOk(), first.status().toString().c_str());
        QVERIFY(first->rfind(kModelFingerprintPrefix, 0) == 0);
        QCOMPARE(first->size(), std::strlen(kModelFingerprintPrefix) + 16);
        QCOMPARE(*modelFingerprint(p), *first);

        const auto ranges = modelFingerprintRanges(size);
        const FileRange middle = ranges[ranges.size() / 2];
        QVERIFY(middle.offset > (uint64_t{8} << 20) && middle.offset + middle.bytes < size - (uint64_t{8} << 20));
        for (uint64_t at : {uint64_t{500000}, size - 300000, middle.offset + middle.bytes / 2}) {
            model[at] ^= 1;
            writeFile(p, model);
            const auto changed = modelFingerprint(p);
            QVERIFY(changed.isOk());
            QVERIFY2(*changed != *first, qPrintable(QString("byte %1 did not change the fingerprint").arg(at)));
            model[at] ^= 1;
        }
        writeFile(p, model);
        QCOMPARE(*modelFingerprint(p), *first);

        model.push_back(0);  // the size is hashed too
        writeFile(p, model);
        QVERIFY(*modelFingerprint(p) != *first);
        std::filesystem::remove(p);
        QCOMPARE(modelFingerprint(p).status().code(), ErrorCode::NotFound);
    }
};

QTEST_GUILESS_MAIN(TstKvSnapshot)
#include "tst_kv_snapshot.moc"
