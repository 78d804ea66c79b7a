// Paged KV bookkeeping: block allocation, the prefix cache, copy-on-write.
//
// The test keeps its own picture of the KV memory (which token each position of
// each block holds): it copies blocks when told to and writes the positions a
// sequence appends into the blocks of its table. After every operation each
// sequence must read back exactly its own tokens through its table.
#include "runtime/kv_blocks.h"

#include <QtTest>

#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace kestrel;
using namespace kestrel::runtime;

namespace {

using Tokens = std::vector<int32_t>;

// The KV memory as the test sees it: block -> token held at each offset.
class ShadowMemory {
public:
    explicit ShadowMemory(const KvBlockManager& m) : m_(m), bt_(m.blockTokens()),
        cells_(static_cast<size_t>(m.totalBlocks()) * static_cast<size_t>(bt_), -1) {}

    void copy(const std::vector<BlockCopy>& copies) {
        for (const BlockCopy& c : copies)
            std::copy_n(cells_.begin() + c.src * bt_, bt_, cells_.begin() + c.dst * bt_);
    }
    // Writes positions [from, tokens.size()) of `seq` through its table; the
    // blocks written must belong to `seq` alone.
    std::string write(SeqId seq, const Tokens& tokens, int64_t from, const std::map<SeqId, Tokens>& live) {
        std::map<BlockId, SeqId> others;
        for (const auto& [other, unused] : live)
            if (other != seq)
                for (BlockId b : m_.table(other)) others[b] = other;
        const auto table = m_.table(seq);
        for (int64_t p = from; p < static_cast<int64_t>(tokens.size()); ++p) {
            if (p / bt_ >= static_cast<int64_t>(table.size())) return "write past the reserved blocks";
            const BlockId b = table[p / bt_];
            if (auto it = others.find(b); it != others.end())
                return "sequence " + std::to_string(seq) + " writes block " + std::to_string(b) + " that sequence " +
                       std::to_string(it->second) + " holds";
            cells_[b * bt_ + p % bt_] = tokens[p];
        }
        return {};
    }
    // Every sequence reads exactly its own tokens.
    std::string verify(const std::map<SeqId, Tokens>& live) const {
        for (const auto& [seq, tokens] : live) {
            if (m_.length(seq) != static_cast<int64_t>(tokens.size()))
                return "sequence " + std::to_string(seq) + " has length " + std::to_string(m_.length(seq)) + ", expected " +
                       std::to_string(tokens.size());
            const auto table = m_.table(seq);
            for (size_t p = 0; p < tokens.size(); ++p) {
                if (p / bt_ >= table.size()) return "sequence " + std::to_string(seq) + " table too short";
                const int32_t held = cells_[table[p / bt_] * bt_ + static_cast<int64_t>(p % bt_)];
                if (held != tokens[p])
                    return "sequence " + std::to_string(seq) + " position " + std::to_string(p) + " reads " +
                           std::to_string(held) + ", wrote " + std::to_string(tokens[p]);
            }
        }
        return {};
    }
    const int32_t* block(BlockId b) const { return cells_.data() + b * bt_; }

private:
    const KvBlockManager& m_;
    int64_t bt_;
    std::vector<int32_t> cells_;
};

// The tokens [0, n) of a made-up stream; streams with different seeds differ from their first token.
Tokens stream(int32_t seed, int64_t n) {
    Tokens t(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) t[size_t(i)] = seed * 1000 + static_cast<int32_t>(i);
    return t;
}

Tokens cat(Tokens a, const Tokens& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// Reserves and commits tokens [length, tokens.size()) as the caller would.
Status append(KvBlockManager& m, SeqId seq, std::span<const int32_t> tokens) {
    std::vector<BlockCopy> copies;
    KESTREL_RETURN_IF_ERROR(m.reserve(seq, static_cast<int64_t>(tokens.size()), copies));
    m.commit(seq, tokens);
    return Status::ok();
}

uint64_t lastTokenHash(uint64_t, std::span<const int32_t> tokens) { return static_cast<uint64_t>(tokens.back()); }
uint64_t constantHash(uint64_t, std::span<const int32_t>) { return 42; }

bool sameStats(const KvBlockStats& a, const KvBlockStats& b) {
    return a.totalBlocks == b.totalBlocks && a.freeBlocks == b.freeBlocks && a.cachedBlocks == b.cachedBlocks &&
           a.usedBlocks == b.usedBlocks && a.liveTokens == b.liveTokens && a.lookups == b.lookups &&
           a.hitTokens == b.hitTokens && a.evictions == b.evictions && a.copies == b.copies;
}

#define VERIFY_OK(expr)                                                   \
    do {                                                                  \
        const Status s_ = (expr);                                         \
        QVERIFY2(s_.isOk(), s_.toString().c_str());                       \
    } while (0)

}  // namespace

class TstKvBlocks : public QObject {
    Q_OBJECT

private slots:
    void sharedSystemPromptIsOneSetOfBlocks() {
        KvBlockManager m(64, 16, 7);
        const Tokens system = stream(1, 40);
        const SeqId a = m.createSequence();
        QCOMPARE(m.attachPrefix(a, system), int64_t(0));  // nothing cached yet
        VERIFY_OK(append(m, a, system));

        const SeqId b = m.createSequence();
        const Tokens prompt = cat(system, stream(2, 9));
        QCOMPARE(m.attachPrefix(b, prompt), int64_t(32));  // the two full blocks, not the partial third
        QCOMPARE(m.length(b), int64_t(32));
        QCOMPARE(m.table(b).size(), size_t(2));
        for (size_t i = 0; i < 2; ++i) {
            QCOMPARE(m.table(b)[i], m.table(a)[i]);
            QCOMPARE(m.refCount(m.table(a)[i]), 2);
        }
        QCOMPARE(m.refCount(m.table(a)[2]), 1);
        std::vector<BlockCopy> copies;
        VERIFY_OK(m.reserve(b, int64_t(prompt.size()), copies));
        QVERIFY(copies.empty());  // b writes from position 32 on: a block of its own
        m.commit(b, prompt);
        QCOMPARE(m.stats().usedBlocks, 5);
        QCOMPARE(m.stats().liveTokens, int64_t(40 + 17));
        QCOMPARE(m.stats().lookups, int64_t(2));
        QCOMPARE(m.stats().hitTokens, int64_t(32));

        // Released prefixes stay cached and serve the next prompt with the same blocks.
        const std::vector<BlockId> shared(m.table(a).begin(), m.table(a).begin() + 2);
        m.release(a);
        m.release(b);
        QCOMPARE(m.stats().usedBlocks, 0);
        QCOMPARE(m.stats().cachedBlocks, 3);  // the 2 system blocks and b's third; partial blocks are freed
        const SeqId c = m.createSequence();
        QCOMPARE(m.attachPrefix(c, std::span(prompt).first(32)), int64_t(32));  // exactly the tokens asked for
        QCOMPARE(std::vector<BlockId>(m.table(c).begin(), m.table(c).end()), shared);
        VERIFY_OK(m.checkInvariants());
    }

    void saltNamesTheModel() {
        const Tokens t = stream(3, 48);
        KvBlockManager m1(8, 16, 0x1111), m2(8, 16, 0x2222), again(8, 16, 0x1111);
        QCOMPARE(m1.prefixHash({}), uint64_t(0x1111));
        for (size_t n : {16, 32, 48}) {
            QVERIFY(m1.prefixHash(std::span(t).first(n)) != m2.prefixHash(std::span(t).first(n)));
            QCOMPARE(m1.prefixHash(std::span(t).first(n)), again.prefixHash(std::span(t).first(n)));
        }
        // The hook sees the salt as the first block's parent: lookups and
        // registrations of a manager all key on its salt.
        static uint64_t seenParent;
        seenParent = 0;
        KvBlockManager spy(8, 16, 0x3333, [](uint64_t parent, std::span<const int32_t> tokens) {
            if (tokens.front() == 3000) seenParent = parent;  // the first block of t
            return KvBlockManager::defaultBlockHash(parent, tokens);
        });
        const SeqId a = spy.createSequence();
        QCOMPARE(spy.attachPrefix(a, t), int64_t(0));
        QCOMPARE(seenParent, uint64_t(0x3333));
    }

    void collidingHashesNeverServeOtherTokens() {
        // Every block hashes alike: only the first registration lives, and
        // lookups of other tokens compare and miss.
        KvBlockManager m(8, 4, 1, &constantHash);
        const Tokens x = stream(1, 4), y = stream(2, 4);
        const SeqId a = m.createSequence();
        VERIFY_OK(append(m, a, x));
        const SeqId b = m.createSequence();
        QCOMPARE(m.attachPrefix(b, y), int64_t(0));
        VERIFY_OK(append(m, b, y));  // its hash is taken: b's block stays private
        m.release(a);
        m.release(b);
        QCOMPARE(m.stats().cachedBlocks, 1);
        const SeqId c = m.createSequence(), d = m.createSequence();
        QCOMPARE(m.attachPrefix(c, y), int64_t(0));
        QCOMPARE(m.attachPrefix(d, x), int64_t(4));
        VERIFY_OK(m.checkInvariants());
    }

    void childOfAReplacedParentIsNotServed() {
        // The hash of a block is its last token, so X = {1, 9} and Y = {2, 9}
        // collide. b computes X+Z next to a's cached X: b's block 0 stays private
        // and its block 1 (Z) is registered as X's child. X is then evicted and Y
        // registered under the same hash; Y+Z must not find the Z block, whose KV
        // was computed after X.
        KvBlockManager m(4, 2, 1, &lastTokenHash);
        const Tokens x{1, 9}, y{2, 9}, z{3, 5};
        const SeqId a = m.createSequence();
        VERIFY_OK(append(m, a, x));
        const SeqId b = m.createSequence();
        VERIFY_OK(append(m, b, cat(x, z)));
        m.release(a);
        m.release(b);
        QCOMPARE(m.stats().cachedBlocks, 2);  // a's X, b's Z

        const SeqId c = m.createSequence();
        VERIFY_OK(append(m, c, cat(y, Tokens{4, 6, 7, 8})));  // 3 blocks: 2 free and X, the oldest cached
        QCOMPARE(m.stats().evictions, int64_t(1));
        QCOMPARE(m.stats().cachedBlocks, 1);  // Z is still there

        const SeqId d = m.createSequence();
        QCOMPARE(m.attachPrefix(d, cat(y, z)), int64_t(2));  // Y only
        QCOMPARE(m.table(d)[0], m.table(c)[0]);
        const SeqId e = m.createSequence();
        QCOMPARE(m.attachPrefix(e, cat(x, z)), int64_t(0));  // Y's block answers X's hash: compared, missed
        VERIFY_OK(m.checkInvariants());
    }

    void outOfMemoryChangesNothing() {
        KvBlockManager m(8, 4, 1);
        const SeqId a = m.createSequence();
        VERIFY_OK(append(m, a, stream(1, 18)));  // 5 blocks, the last one half full
        const SeqId b = m.createSequence();
        std::vector<BlockCopy> copies;
        const KvBlockStats before = m.stats();
        const Status s = m.reserve(b, 16, copies);
        QCOMPARE(s.code(), ErrorCode::OutOfMemory);
        QVERIFY2(s.message().find("needs 4") != std::string::npos, s.message().c_str());
        QVERIFY2(s.message().find("only 3") != std::string::npos, s.message().c_str());
        QVERIFY(copies.empty());
        QVERIFY(m.table(b).empty());
        QCOMPARE(m.length(b), int64_t(0));
        QVERIFY(sameStats(before, m.stats()));
        QCOMPARE(m.reserve(b, INT64_MAX, copies).code(), ErrorCode::OutOfMemory);
        QVERIFY(m.table(b).empty());

        // A copy-on-write that finds no block fails the same way.
        const SeqId f = m.fork(a);
        VERIFY_OK(m.reserve(b, 12, copies));  // the last 3 blocks
        const std::vector<BlockId> forkTable(m.table(f).begin(), m.table(f).end());
        const KvBlockStats full = m.stats();
        QCOMPARE(m.reserve(f, 19, copies).code(), ErrorCode::OutOfMemory);
        QVERIFY(copies.empty());
        QCOMPARE(std::vector<BlockId>(m.table(f).begin(), m.table(f).end()), forkTable);
        QCOMPARE(m.length(f), int64_t(18));
        QVERIFY(sameStats(full, m.stats()));
        VERIFY_OK(m.checkInvariants());

        m.release(b);
        VERIFY_OK(m.reserve(f, 19, copies));
        QCOMPARE(copies.size(), size_t(1));
        VERIFY_OK(m.checkInvariants());
    }

    void leastRecentlyReleasedIsEvictedFirst() {
        KvBlockManager m(6, 4, 1);
        const Tokens ta = stream(1, 4), tb = stream(2, 4), tc = stream(3, 4);
        for (const Tokens* t : {&ta, &tb, &tc}) {
            const SeqId s = m.createSequence();
            VERIFY_OK(append(m, s, *t));
            m.release(s);
        }
        // A hit makes a block recent again: order now b, c, a.
        const SeqId touch = m.createSequence();
        QCOMPARE(m.attachPrefix(touch, ta), int64_t(4));
        m.release(touch);

        const SeqId big = m.createSequence();
        std::vector<BlockCopy> copies;
        VERIFY_OK(m.reserve(big, 16, copies));  // 3 free + 1 evicted
        QCOMPARE(m.stats().evictions, int64_t(1));
        const SeqId sa = m.createSequence(), sb = m.createSequence(), sc = m.createSequence();
        QCOMPARE(m.attachPrefix(sb, tb), int64_t(0));
        QCOMPARE(m.attachPrefix(sc, tc), int64_t(4));
        QCOMPARE(m.attachPrefix(sa, ta), int64_t(4));
        VERIFY_OK(m.checkInvariants());
    }

    void chainsAreEvictedTailFirst() {
        KvBlockManager m(3, 4, 1);
        const Tokens t = stream(1, 8);
        const SeqId a = m.createSequence();
        VERIFY_OK(append(m, a, t));
        m.release(a);
        const SeqId b = m.createSequence();
        std::vector<BlockCopy> copies;
        VERIFY_OK(m.reserve(b, 8, copies));  // 1 free + 1 evicted: the chain's second block
        const SeqId c = m.createSequence();
        QCOMPARE(m.attachPrefix(c, t), int64_t(4));
        VERIFY_OK(m.checkInvariants());
    }

    void forkThenWriteCopiesTheSharedBlock() {
        KvBlockManager m(16, 4, 1);
        ShadowMemory mem(m);
        std::map<SeqId, Tokens> live;
        const SeqId a = m.createSequence();
        live[a] = stream(1, 6);
        std::vector<BlockCopy> copies;
        VERIFY_OK(m.reserve(a, 6, copies));
        QCOMPARE(QString::fromStdString(mem.write(a, live[a], 0, live)), QString());
        m.commit(a, live[a]);

        const SeqId f = m.fork(a);
        live[f] = live[a];
        QCOMPARE(std::vector<BlockId>(m.table(f).begin(), m.table(f).end()),
                 std::vector<BlockId>(m.table(a).begin(), m.table(a).end()));
        const BlockId tail = m.table(a)[1];
        QCOMPARE(m.refCount(tail), 2);

        live[f].push_back(777);
        VERIFY_OK(m.reserve(f, 7, copies));
        QCOMPARE(copies.size(), size_t(1));
        QCOMPARE(copies[0].src, tail);
        QCOMPARE(copies[0].dst, m.table(f)[1]);
        QCOMPARE(m.table(f)[0], m.table(a)[0]);  // the full block is not written: still shared
        QCOMPARE(m.table(a)[1], tail);
        mem.copy(copies);
        QCOMPARE(QString::fromStdString(mem.write(f, live[f], 6, live)), QString());
        m.commit(f, live[f]);
        QCOMPARE(QString::fromStdString(mem.verify(live)), QString());
        QCOMPARE(m.refCount(tail), 1);

        copies.clear();
        live[a].push_back(888);
        VERIFY_OK(m.reserve(a, 7, copies));
        QVERIFY(copies.empty());  // its own again
        QCOMPARE(QString::fromStdString(mem.write(a, live[a], 6, live)), QString());
        m.commit(a, live[a]);
        QCOMPARE(QString::fromStdString(mem.verify(live)), QString());
        QCOMPARE(m.stats().copies, int64_t(1));
        VERIFY_OK(m.checkInvariants());
    }

    void writeAfterTruncatingIntoACachedBlockCopies() {
        KvBlockManager m(8, 4, 1);
        const Tokens t = stream(1, 8);
        const SeqId a = m.createSequence();
        VERIFY_OK(append(m, a, t));
        const std::vector<BlockId> original(m.table(a).begin(), m.table(a).end());
        m.truncate(a, 6);  // regenerate from position 6
        QCOMPARE(m.length(a), int64_t(6));
        QCOMPARE(m.table(a).size(), size_t(2));
        std::vector<BlockCopy> copies;
        VERIFY_OK(m.reserve(a, 7, copies));
        QCOMPARE(copies.size(), size_t(1));
        QCOMPARE(copies[0].src, original[1]);
        QVERIFY(m.table(a)[1] != original[1]);
        QCOMPARE(m.stats().cachedBlocks, 1);  // the registered block, intact
        const SeqId b = m.createSequence();
        QCOMPARE(m.attachPrefix(b, t), int64_t(8));
        QCOMPARE(std::vector<BlockId>(m.table(b).begin(), m.table(b).end()), original);
        VERIFY_OK(m.checkInvariants());
    }

    void withNoRoomToCopyAnOwnedCachedBlockIsWrittenInPlace() {
        KvBlockManager m(2, 4, 1);
        const Tokens t = stream(1, 8);
        const SeqId a = m.createSequence();
        VERIFY_OK(append(m, a, t));
        const std::vector<BlockId> original(m.table(a).begin(), m.table(a).end());
        m.truncate(a, 6);
        std::vector<BlockCopy> copies;
        VERIFY_OK(m.reserve(a, 7, copies));
        QVERIFY(copies.empty());
        QCOMPARE(std::vector<BlockId>(m.table(a).begin(), m.table(a).end()), original);
        m.commit(a, cat(stream(1, 6), Tokens{5}));
        m.release(a);
        const SeqId b = m.createSequence();
        QCOMPARE(m.attachPrefix(b, t), int64_t(4));  // the second block left the cache
        VERIFY_OK(m.checkInvariants());
    }

    void unknownSequencesAreRefused() {
        KvBlockManager m(4, 4, 1);
        const SeqId a = m.createSequence();
        m.release(a);
        std::vector<BlockCopy> copies;
        QCOMPARE(m.reserve(a, 4, copies).code(), ErrorCode::InvalidArgument);
        QCOMPARE(m.reserve(12345, 4, copies).code(), ErrorCode::InvalidArgument);
        QCOMPARE(m.fork(a), kInvalidSeqId);
        QCOMPARE(m.attachPrefix(a, stream(1, 4)), int64_t(0));
        QVERIFY(m.table(a).empty());
        QCOMPARE(m.length(a), int64_t(0));
        m.commit(a, stream(1, 4));
        m.truncate(a, 0);
        m.release(a);
        const SeqId b = m.createSequence();
        QVERIFY(b != a);
        m.commit(b, stream(1, 4));  // never reserved: ignored
        QCOMPARE(m.length(b), int64_t(0));
        QCOMPARE(m.stats().freeBlocks, 4);
        VERIFY_OK(m.checkInvariants());
    }

    void randomOperationsKeepEverySequencesTokens() {
        constexpr int kBlocks = 48, kBt = 4, kMaxLive = 10, kOps = 10000;
        KvBlockManager m(kBlocks, kBt, 0xfeed);
        ShadowMemory mem(m);
        std::mt19937 rng(20240611);
        auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint32_t>(n)); };
        std::vector<Tokens> systems;
        for (int i = 0; i < 4; ++i) systems.push_back(stream(100 + i, 10 + 7 * i));

        std::map<SeqId, Tokens> live;     // what each sequence holds
        std::map<SeqId, Tokens> pending;  // prompt tokens it still has to append
        auto randomLive = [&] {
            auto it = live.begin();
            std::advance(it, pick(static_cast<int64_t>(live.size())));
            return it->first;
        };
        int64_t hitBlocks = 0, outOfMemory = 0, forks = 0, truncations = 0;
        for (int op = 0; op < kOps; ++op) {
            const int64_t r = pick(100);
            std::string what;
            if (live.empty() || (r < 15 && static_cast<int>(live.size()) < kMaxLive)) {
                what = "create";
                const SeqId s = m.createSequence();
                const Tokens& sys = systems[size_t(pick(int64_t(systems.size())))];
                Tokens prompt(sys.begin(), sys.begin() + pick(int64_t(sys.size()) + 1));
                for (int64_t i = pick(6); i > 0; --i) prompt.push_back(int32_t(pick(8)));
                const int64_t hit = pick(5) == 0 ? 0 : m.attachPrefix(s, prompt);  // some compute it all again
                QVERIFY(hit % kBt == 0 && hit <= int64_t(prompt.size()));
                hitBlocks += hit / kBt;
                live[s] = Tokens(prompt.begin(), prompt.begin() + hit);
                pending[s] = Tokens(prompt.begin() + hit, prompt.end());
            } else if (r < 60) {
                what = "append";
                const SeqId s = randomLive();
                Tokens next = live[s];
                Tokens& rest = pending[s];
                const int64_t n = pick(4) == 0 ? 1 + pick(24) : 1 + pick(3);
                for (int64_t i = 0; i < n; ++i) {
                    if (!rest.empty()) {
                        next.push_back(rest.front());
                        rest.erase(rest.begin());
                    } else {
                        next.push_back(int32_t(pick(8)));
                    }
                }
                const std::vector<BlockId> tableBefore(m.table(s).begin(), m.table(s).end());
                const KvBlockStats before = m.stats();
                std::vector<BlockCopy> copies;
                const Status st = m.reserve(s, int64_t(next.size()), copies);
                if (!st.isOk()) {
                    QCOMPARE(st.code(), ErrorCode::OutOfMemory);
                    QVERIFY(copies.empty());
                    QVERIFY(tableBefore == std::vector<BlockId>(m.table(s).begin(), m.table(s).end()));
                    QVERIFY(sameStats(before, m.stats()));
                    ++outOfMemory;
                    rest.insert(rest.begin(), next.begin() + int64_t(live[s].size()), next.end());
                } else {
                    mem.copy(copies);
                    const std::string err = mem.write(s, next, int64_t(live[s].size()), live);
                    QVERIFY2(err.empty(), err.c_str());
                    m.commit(s, next);
                    live[s] = next;
                }
            } else if (r < 72) {
                what = "truncate";
                const SeqId s = randomLive();
                const int64_t n = pick(int64_t(live[s].size()) + 1);
                m.truncate(s, n);
                live[s].resize(size_t(n));
                pending[s].clear();
                ++truncations;
            } else if (r < 82 && static_cast<int>(live.size()) < kMaxLive) {
                what = "fork";
                const SeqId s = randomLive();
                const SeqId f = m.fork(s);
                QVERIFY(f != kInvalidSeqId);
                live[f] = live[s];
                pending[f] = {};
                ++forks;
            } else if (r < 98) {
                what = "release";
                const SeqId s = randomLive();
                m.release(s);
                live.erase(s);
                pending.erase(s);
            } else {
                what = "clearCache";
                m.clearCache();
                QCOMPARE(m.stats().cachedBlocks, 0);
            }
            const Status inv = m.checkInvariants();
            QVERIFY2(inv.isOk(), (what + " at op " + std::to_string(op) + ": " + inv.toString()).c_str());
            const std::string err = mem.verify(live);
            QVERIFY2(err.empty(), (what + " at op " + std::to_string(op) + ": " + err).c_str());
        }
        const KvBlockStats st = m.stats();
        std::printf("random ops: %lld hit blocks, %lld copies, %lld evictions, %lld out-of-memory, %lld forks, "
                    "%lld truncations\n", (long long)hitBlocks, (long long)st.copies, (long long)st.evictions,
                    (long long)outOfMemory, (long long)forks, (long long)truncations);
        // Every path was taken.
        QVERIFY(hitBlocks > 100);
        QVERIFY(st.copies > 50);
        QVERIFY(st.evictions > 50);
        QVERIFY(outOfMemory > 10);

        for (const auto& [s, unused] : live) m.release(s);
        m.clearCache();
        QCOMPARE(m.stats().freeBlocks, kBlocks);
        QCOMPARE(m.availableBlocks(), kBlocks);
        VERIFY_OK(m.checkInvariants());
    }

    void mixedWorkloadKeepsBlocksFull() {
        // Sequences of 150..3000 tokens, some starting from one of three shared
        // system prompts, prefilled in chunks then decoded a token at a time.
        constexpr int kBt = 16, kSequences = 200;
        KvBlockManager m(kSequences * (3000 / kBt + 1), kBt, 99);
        std::mt19937 rng(7);
        const std::vector<Tokens> systems{stream(1, 200), stream(2, 333), stream(3, 64)};
        for (int i = 0; i < kSequences; ++i) {
            const SeqId s = m.createSequence();
            const int64_t target = 150 + int64_t(rng() % 2851);
            Tokens tokens;
            if (rng() % 2) {
                const Tokens& sys = systems[rng() % systems.size()];
                tokens.assign(sys.begin(), sys.begin() + std::min<int64_t>(target, int64_t(sys.size())));
            }
            while (int64_t(tokens.size()) < target) tokens.push_back(int32_t(rng() % 32000));
            int64_t length = m.attachPrefix(s, tokens);
            while (length < target) {
                const int64_t step = length < target / 2 ? std::min<int64_t>(512, target / 2 - length + 1) : 1;
                length = std::min(length + step, target);
                VERIFY_OK(append(m, s, std::span(tokens).first(size_t(length))));
            }
        }
        const KvBlockStats st = m.stats();
        const double occupancy = double(st.liveTokens) / (double(st.usedBlocks) * kBt);
        std::printf("occupancy: %lld live tokens in %d blocks of %d: %.4f\n", (long long)st.liveTokens, st.usedBlocks, kBt,
                    occupancy);
        QVERIFY(st.hitTokens > 0);
        QVERIFY2(occupancy >= 0.95, std::to_string(occupancy).c_str());
        VERIFY_OK(m.checkInvariants());
    }
};

QTEST_APPLESS_MAIN(TstKvBlocks)
#include "tst_kv_blocks.moc"
