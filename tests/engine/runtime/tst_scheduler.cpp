// Scheduler on the real SmolLM2: a short stream progresses while a long prompt
// prefills, greedy output equals a lone Session's, cancellation frees KV before
// onDone, parallel samples share one prefill, admission control, and
// preemption under a small KV pool resumes requests without changing them.
//
// Exact comparisons and the CPU kernels: a step's decode rows are computed
// apart from its prefill rows (kernels::matmulDecode). Up to
// kernels::matmulExactBatchTokens rows (16 for SmolLM2's Q4_1/Q8_0 on AVX-512
// VNNI and AVX2, in the lanes layout; every count on the scalar ISA) each decode row is bit for bit what it
// is alone, so lone streams are the reference for batched ones. Where that
// count is 1 (no few-token GEMV for the type on this ISA: the one-token GEMV rounds
// differently from the multi-row panels, ~1e-5, and int8 re-quantisation of
// the next layer's activations amplifies it to tenths of a logit), a "stream"
// is a pair of greedy variants (n = 2), so each of its steps has two decode
// rows whether it runs alone or beside others. Preemption recomputes a
// request's generated tokens as prefill rows: that equals how they were
// decoded only where decode and prefill rows round alike (the scalar ISA, or
// pairs where there is no few-token GEMV), so with the GEMV the preemption
// test checks resumption without comparing tokens, and ctest runs it again on
// the scalar ISA (tst_scheduler_resume_scalar), where it compares them.
// References run on a second Model instance: its own pool, so prefix reuse
// never changes how a reference is chunked.
#include "kestrel/chat.h"
#include "kestrel/engine.h"
#include "kestrel/scheduler.h"
#include "matmul.h"
#include "test_env.h"

#include <QtTest>

#include <atomic>
#include <mutex>
#include <thread>

using namespace kestrel;

namespace {

GenerateParams greedy(int n) {
    GenerateParams p;
    p.sampling.temperature = 0;
    p.maxTokens = n;
    p.ignoreEndOfGeneration = true;
    return p;
}

// What onPiece/onDone of one request saw. Written on the scheduler thread;
// read after waitIdle(), which orders it.
struct Outcome {
    Status status;
    std::vector<GenerateResult> results;
    std::vector<std::string> streamed;  // per variant
    bool done = false;
};

}  // namespace

class TstScheduler : public QObject {
    Q_OBJECT

    std::shared_ptr<Model> model_;
    std::shared_ptr<Model> reference_;  // for Session references: a pool of its own

    std::unique_ptr<Scheduler> newScheduler(int prefillChunk = 256, std::shared_ptr<Model> model = {}) {
        SchedulerOptions o;
        o.prefillChunk = prefillChunk;
        auto s = Scheduler::create(model ? model : model_, o);
        if (!s) qFatal("%s", s.status().toString().c_str());
        return std::move(s).value();
    }

    // `tokens` tokens of text that starts with `tag`, so no other test's prefix is cached.
    std::vector<TokenId> longPrompt(const std::string& tag, size_t tokens) const {
        std::string text = "Notes " + tag + ".";
        std::vector<TokenId> ids;
        while ((ids = model_->tokenize(text, true, false)).size() < tokens)
            for (size_t i = 0; i < tokens / 16 + 1; ++i)  // a sentence is about 20 tokens
                text += " The river carried the boats past the old mill, and the miller counted them one by one.";
        ids.resize(tokens);
        return ids;
    }

    std::vector<TokenId> chat(const std::string& user) const {
        ChatMessage m;
        m.role = "user";
        m.content = user;
        return buildChatPrompt(*model_, {m}, true);
    }

    static RequestId submitInto(Scheduler& s, std::vector<TokenId> prompt, const RequestOptions& o, Outcome& out) {
        out.streamed.assign(size_t(o.n), {});
        auto id = s.submit(
            std::move(prompt), o,
            [&out](int32_t v, const Piece& p) {
                out.streamed[size_t(v)] += p.text;
                return true;
            },
            [&out](Result<std::vector<GenerateResult>> r) {
                out.done = true;
                if (r) out.results = std::move(r).value();
                else out.status = r.status();
            });
        if (!id) qFatal("submit: %s", id.status().toString().c_str());
        return id.value();
    }

    static Outcome runAlone(Scheduler& s, std::vector<TokenId> prompt, const RequestOptions& o) {
        Outcome out;
        submitInto(s, std::move(prompt), o, out);
        s.waitIdle();
        return out;
    }

    std::vector<TokenId> sessionTokens(const std::vector<TokenId>& prompt, const GenerateParams& p) {
        SessionOptions so;
        so.contextLength = 2048;
        so.batchSize = 256;
        auto session = Session::create(reference_, so);
        if (!session) qFatal("%s", session.status().toString().c_str());
        auto r = session.value()->generate(prompt, p);
        if (!r) qFatal("%s", r.status().toString().c_str());
        return r->tokens;
    }

private slots:
    void initTestCase() {
        KESTREL_REQUIRE_MODEL(test::smollm2Path());
        LoadOptions o;
        o.path = test::smollm2Path().toStdString();
        o.threads = 2;
        auto m = Model::load(o);
        QVERIFY2(m.isOk(), m.status().toString().c_str());
        model_ = std::move(m).value();
        o.kvPoolTokens = 4096;
        auto r = Model::load(o);
        QVERIFY2(r.isOk(), r.status().toString().c_str());
        reference_ = std::move(r).value();
    }

    void shortStreamProgressesWhileALongPromptPrefills() {
        auto s = newScheduler(64);
        std::mutex m;
        std::vector<char> events;  // 'A' or 'B' per generated token, in order
        auto record = [&](char who) {
            return [&events, &m, who](int32_t, const Piece& p) {
                std::lock_guard lock(m);
                if (p.token >= 0) events.push_back(who);
                return true;
            };
        };
        RequestOptions a, b;
        a.params = greedy(4);
        b.params = greedy(24);
        const auto longA = longPrompt("long-prefill", 1024);
        Status aStatus, bStatus;
        auto ida = s->submit(longA, a, record('A'), [&](auto r) { aStatus = r.status(); });
        auto idb = s->submit(chat("Tell me about the sea."), b, record('B'), [&](auto r) { bStatus = r.status(); });
        QVERIFY(ida.isOk() && idb.isOk());
        s->waitIdle();
        QVERIFY2(aStatus.isOk(), aStatus.toString().c_str());
        QVERIFY2(bStatus.isOk(), bStatus.toString().c_str());

        const auto firstA = std::find(events.begin(), events.end(), 'A');
        const auto firstB = std::find(events.begin(), events.end(), 'B');
        QVERIFY(firstA != events.end() && firstB != events.end());
        QVERIFY2(firstB < firstA, std::string(events.begin(), events.end()).c_str());
        const auto bBeforeA = std::count(events.begin(), firstA, 'B');
        QVERIFY2(bBeforeA >= 5, qPrintable(QString("B had %1 tokens before A's first").arg(bBeforeA)));
        QCOMPARE(std::count(events.begin(), events.end(), 'A'), 4L);
        QVERIFY(s->stats().prefillTokens >= 1024);
    }

    void greedyOutputEqualsSession() {
        auto s = newScheduler();
        const auto prompt = chat("Name three colours of the rainbow.");
        const GenerateParams p = greedy(32);
        RequestOptions o;
        o.params = p;
        const Outcome out = runAlone(*s, prompt, o);
        QVERIFY2(out.status.isOk(), out.status.toString().c_str());
        QCOMPARE(int(out.results.size()), 1);
        const GenerateResult& r = out.results.front();
        QCOMPARE(r.reason, StopReason::MaxTokens);
        QCOMPARE(r.tokens, sessionTokens(prompt, p));
        QCOMPARE(out.streamed.front(), r.text);
        QCOMPARE(r.promptTokens, int(prompt.size()));
    }

    void cancelMidPrefillFreesItsBlocks() {
        auto s = newScheduler(64);
        const auto before = s->stats();
        const auto longA = longPrompt("cancelled", 1500);
        Outcome a;
        Scheduler::Stats atDone;
        RequestOptions o;
        o.params = greedy(8);
        auto ida = s->submit(longA, o, {}, [&](Result<std::vector<GenerateResult>> r) {
            atDone = s->stats();  // onDone runs after the request's sequences are closed
            a.done = true;
            if (r) a.results = std::move(r).value();
            else a.status = r.status();
        });
        QVERIFY(ida.isOk());
        // B's first token comes a step or two into A's 24-chunk prefill; B cancels A
        // from the scheduler thread and stops itself.
        RequestOptions bo;
        bo.params = greedy(8);
        const RequestId idA = ida.value();
        auto idb = s->submit(chat("Hi"), bo, [&s, idA](int32_t, const Piece&) {
            s->cancel(idA);
            return false;
        }, {});
        QVERIFY(idb.isOk());
        s->waitIdle();

        QVERIFY2(a.status.isOk(), a.status.toString().c_str());
        QCOMPARE(int(a.results.size()), 1);
        QCOMPARE(a.results.front().reason, StopReason::Cancelled);
        QVERIFY(a.results.front().tokens.empty());
        QVERIFY2(atDone.prefillTokens - before.prefillTokens < int64_t(longA.size()),
                 "A's prefill had finished before the cancel: not a mid-prefill cancel");
        QCOMPARE(atDone.usedBlocks, before.usedBlocks);
        QCOMPARE(atDone.running, 0);
    }

    void cancelFromAnotherThreadWhileDecoding() {
        auto s = newScheduler();
        const auto before = s->stats();
        std::atomic<int> produced{0};
        Outcome out;
        RequestOptions o;
        o.params = greedy(1000);
        auto id = s->submit(chat("Tell me a long story."), o, [&](int32_t, const Piece&) {
            ++produced;
            return true;
        }, [&](Result<std::vector<GenerateResult>> r) {
            if (r) out.results = std::move(r).value();
            else out.status = r.status();
        });
        QVERIFY(id.isOk());
        while (produced.load() < 5) std::this_thread::yield();
        s->cancel(id.value());
        s->waitIdle();
        QVERIFY2(out.status.isOk(), out.status.toString().c_str());
        QCOMPARE(out.results.front().reason, StopReason::Cancelled);
        QVERIFY(out.results.front().tokens.size() < 1000);
        QCOMPARE(s->stats().usedBlocks, before.usedBlocks);
    }

    void parallelSamplesShareOnePrefill() {
        auto s = newScheduler();
        // Longer than two KV blocks: the variants share full blocks and copy the partial one.
        const auto prompt = longPrompt("parallel samples", 40);
        RequestOptions o;
        o.n = 3;
        o.params.sampling.temperature = 1.0f;
        o.params.sampling.topK = 0;
        o.params.sampling.topP = 1.0f;
        o.params.sampling.minP = 0.0f;
        o.params.sampling.seed = 42;
        o.params.maxTokens = 16;
        o.params.ignoreEndOfGeneration = true;
        const auto before = s->stats();
        const Outcome out = runAlone(*s, prompt, o);
        const auto after = s->stats();
        QVERIFY2(out.status.isOk(), out.status.toString().c_str());
        QCOMPARE(int(out.results.size()), 3);
        QCOMPARE(out.results[0].reusedTokens, 0);
        QCOMPARE(after.prefillTokens - before.prefillTokens, int64_t(prompt.size()));
        // Each variant's first token comes from the shared prefill; the last is never fed.
        QCOMPARE(after.decodeTokens - before.decodeTokens, int64_t(3 * 15));
        for (int v = 0; v < 3; ++v) {
            QCOMPARE(int(out.results[v].tokens.size()), 16);
            QCOMPARE(out.results[v].seed, uint64_t(42 + v));
            QCOMPARE(out.streamed[size_t(v)], out.results[v].text);
        }
        QVERIFY(out.results[0].tokens != out.results[1].tokens);
        QVERIFY(out.results[0].tokens != out.results[2].tokens);
        QVERIFY(out.results[1].tokens != out.results[2].tokens);
        QCOMPARE(after.usedBlocks, before.usedBlocks);

        // Variant v is seeded seed + v and reads the shared prompt KV like its own:
        // the same request with n = 2 and seed 43 gives variants 1 and 2 again.
        o.n = 2;
        o.params.sampling.seed = 43;
        const Outcome again = runAlone(*s, prompt, o);
        QVERIFY2(again.status.isOk(), again.status.toString().c_str());
        QCOMPARE(again.results[0].tokens, out.results[1].tokens);
        QCOMPARE(again.results[1].tokens, out.results[2].tokens);
    }

    void requestsThatCanNeverFitAreRefused() {
        auto s = newScheduler();
        const int context = s->contextLength();
        QVERIFY(context > 0);
        const TokenId a = model_->tokenize("a", false, false).front();
        RequestOptions o;
        o.params = greedy(4);

        auto tooLong = s->submit(std::vector<TokenId>(size_t(context) + 1, a), o, {}, {});
        QVERIFY(!tooLong.isOk());
        QCOMPARE(tooLong.status().code(), ErrorCode::InvalidArgument);
        const std::string msg = tooLong.status().message();
        QVERIFY2(msg.find(std::to_string(context + 1)) != std::string::npos, msg.c_str());
        QVERIFY2(msg.find(std::to_string(context)) != std::string::npos, msg.c_str());

        o.params.maxTokens = 100;
        auto noRoom = s->submit(std::vector<TokenId>(size_t(context) - 10, a), o, {}, {});
        QVERIFY(!noRoom.isOk());
        QVERIFY2(noRoom.status().message().find("maxTokens") != std::string::npos, noRoom.status().message().c_str());

        o.n = 0;
        QVERIFY(!s->submit({a, a}, o, {}, {}).isOk());
        o.n = 1;
        QVERIFY(!s->submit({}, o, {}, {}).isOk());
        QVERIFY(!s->submit({a, 999999}, o, {}, {}).isOk());
        QCOMPARE(s->stats().waiting, 0);

        SchedulerOptions bad;
        bad.prefillChunk = 0;
        QVERIFY(!Scheduler::create(model_, bad).isOk());
    }

    void concurrentGreedyStreamsEqualRunningAlone() {
        auto s = newScheduler(64);
        const std::vector<std::vector<TokenId>> prompts = {
            chat("What is the capital of France?"), chat("Write a haiku about autumn leaves."),
            longPrompt("four streams", 300), chat("List the planets of the solar system in order.")};
        RequestOptions o;
        o.params = greedy(24);
        // See the top of the file: single streams where 4 decode rows are exact, else pairs.
        const bool exactRows = kernels::matmulExactBatchTokens(GgmlType::Q4_1) >= 4 &&
                               kernels::matmulExactBatchTokens(GgmlType::Q8_0) >= 4;
        o.n = exactRows ? 1 : 2;
        qInfo("streams of %d variant(s)", o.n);
        std::vector<std::vector<TokenId>> alone;
        const int64_t stepsBefore = s->stats().steps;
        for (const auto& p : prompts) {
            const Outcome out = runAlone(*s, p, o);
            QVERIFY2(out.status.isOk(), out.status.toString().c_str());
            if (o.n == 2) QCOMPARE(out.results[1].tokens, out.results[0].tokens);  // greedy variants agree
            alone.push_back(out.results.front().tokens);
        }
        const int64_t aloneSteps = s->stats().steps - stepsBefore;

        std::vector<Outcome> together(prompts.size());
        for (size_t i = 0; i < prompts.size(); ++i) submitInto(*s, prompts[i], o, together[i]);
        s->waitIdle();
        const int64_t togetherSteps = s->stats().steps - stepsBefore - aloneSteps;
        for (size_t i = 0; i < prompts.size(); ++i) {
            QVERIFY2(together[i].status.isOk(), together[i].status.toString().c_str());
            for (const GenerateResult& r : together[i].results) QCOMPARE(r.tokens, alone[i]);
        }
        QVERIFY2(togetherSteps < aloneSteps, "the four streams were not batched");
    }

    void preemptionUnderASmallPoolResumesRequests() {
        RequestOptions o;
        o.params = greedy(60);
        // See the top of the file: when do recomputed tokens equal decoded ones?
        const int64_t exactRows = std::min(kernels::matmulExactBatchTokens(GgmlType::Q4_1),
                                           kernels::matmulExactBatchTokens(GgmlType::Q8_0));
        const bool compareTokens = exactRows == INT64_MAX || exactRows == 1;
        o.n = exactRows == INT64_MAX ? 1 : 2;
        // Blocks of 16: three requests of 100 + n x 60 tokens (14 blocks each for pairs, 10 for
        // single streams) cannot all stay in 32 (pairs) or 24 blocks.
        LoadOptions lo;
        lo.path = test::smollm2Path().toStdString();
        lo.threads = 2;
        lo.kvPoolTokens = o.n == 2 ? 512 : 384;
        auto small = Model::load(lo);
        QVERIFY2(small.isOk(), small.status().toString().c_str());
        auto s = newScheduler(64, small.value());
        qInfo("streams of %d variant(s); %s", o.n, compareTokens ? "tokens compared with lone runs" : "tokens not compared");
        std::vector<std::vector<TokenId>> prompts;
        for (const char* tag : {"first", "second", "third"}) prompts.push_back(longPrompt(tag, 100));
        std::vector<std::vector<TokenId>> alone;
        for (const auto& p : prompts) alone.push_back(runAlone(*s, p, o).results.front().tokens);
        QCOMPARE(s->stats().preemptions, 0);

        std::vector<Outcome> together(prompts.size());
        for (size_t i = 0; i < prompts.size(); ++i) submitInto(*s, prompts[i], o, together[i]);
        s->waitIdle();
        const auto st = s->stats();
        QVERIFY2(st.preemptions > 0, "the pool was expected to run out");
        for (size_t i = 0; i < prompts.size(); ++i) {
            QVERIFY2(together[i].status.isOk(), together[i].status.toString().c_str());
            for (size_t v = 0; v < size_t(o.n); ++v) {
                const GenerateResult& r = together[i].results[v];
                QCOMPARE(int(r.tokens.size()), 60);
                // Streamed once: a resumed request does not repeat text.
                QCOMPARE(together[i].streamed[v], r.text);
                if (compareTokens) QCOMPARE(r.tokens, alone[i]);
            }
        }
        QCOMPARE(st.usedBlocks, 0);

        // A session holds most of the pool: a request that fits the pool but not
        // what is left ends with a clear error instead of waiting forever.
        SessionOptions so;
        so.contextLength = int32_t(lo.kvPoolTokens);
        auto holder = Session::create(small.value(), so);
        QVERIFY(holder.isOk());
        QVERIFY(holder.value()->evaluate(longPrompt("holder", size_t(lo.kvPoolTokens - 112))).isOk());
        o.params = greedy(200);
        o.n = 1;
        const Outcome starved = runAlone(*s, longPrompt("starved", 60), o);
        QCOMPARE(starved.status.code(), ErrorCode::OutOfMemory);
        QVERIFY2(!starved.status.message().empty(), "no message");
        QCOMPARE(s->stats().running, 0);
    }

    void destructionCancelsWhatIsLeft() {
        Outcome out;
        {
            auto s = newScheduler();
            RequestOptions o;
            o.params = greedy(1000);
            submitInto(*s, chat("Count to one thousand."), o, out);
        }
        QVERIFY(out.done);
        QVERIFY2(out.status.isOk(), out.status.toString().c_str());
        QCOMPARE(out.results.front().reason, StopReason::Cancelled);
    }
};

QTEST_APPLESS_MAIN(TstScheduler)
#include "tst_scheduler.moc"
