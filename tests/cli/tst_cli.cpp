// kestrel-cli's output formats are a contract (tools and later checks parse
// them): stdout carries only the result, errors go to stderr with exit codes.
#include "test_env.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

class TstCli : public QObject {
    Q_OBJECT

    struct Run {
        int exitCode = -1;
        QString out, err;
    };

    static Run cli(const QStringList& args) {
        QProcess p;
        p.start(QStringLiteral(KESTREL_CLI_PATH), args);
        if (!p.waitForFinished(300000)) qFatal("kestrel-cli %s did not finish", qPrintable(args.join(' ')));
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
                QString::fromUtf8(p.readAllStandardError())};
    }

    QString model_;

private slots:
    void initTestCase() {
        model_ = kestrel::test::smollm2Path();
        KESTREL_REQUIRE_MODEL(model_);
    }

    void tokenizePrintsIdsOnly() {
        auto r = cli({"tokenize", "-m", model_, "Hello world"});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, QStringLiteral("19556 905\n"));  // SmolLM2 adds no BOS
        auto special = cli({"tokenize", "-m", model_, "<|im_start|>"});
        QCOMPARE(special.out, QStringLiteral("1\n"));
    }

    void generateTokensIsReproducibleAndMatchesText() {
        const QStringList base = {"generate", "-m", model_, "-p", "The capital of France is", "-n", "12",
                                  "--temp", "0", "--threads", "2"};
        auto ids = cli(base + QStringList{"--tokens"});
        QCOMPARE(ids.exitCode, 0);
        const QStringList parts = ids.out.trimmed().split(' ');
        QVERIFY2(parts.size() >= 1 && parts.size() <= 12, qPrintable(ids.out));
        for (const auto& p : parts) {
            bool ok = false;
            p.toInt(&ok);
            QVERIFY2(ok, qPrintable("not a token id: " + p));
        }
        QCOMPARE(cli(base + QStringList{"--tokens"}).out, ids.out);  // greedy: same ids every run

        auto text = cli(base);
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains("Paris"), qPrintable(text.out));
        QVERIFY2(text.err.contains("tok/s"), qPrintable(text.err));  // stats on stderr, not stdout
        QVERIFY(!text.out.contains("tok/s"));
    }

    void seededSamplingIsReproducible() {
        const QStringList args = {"generate", "-m", model_, "-p", "Once upon a time", "-n", "16",
                                  "--temp", "0.9", "--seed", "42", "--tokens"};
        QCOMPARE(cli(args).out, cli(args).out);
    }

    void benchJsonHasTheContractKeys() {
        auto r = cli({"bench", "-m", model_, "-p", "16", "-n", "8", "-r", "1", "--json", "--threads", "2"});
        QCOMPARE(r.exitCode, 0);
        const auto doc = QJsonDocument::fromJson(r.out.toUtf8());
        QVERIFY2(doc.isObject(), qPrintable(r.out));
        for (const char* key : {"prefill_tok_s", "decode_tok_s", "gb_s"}) {
            QVERIFY2(doc.object().value(key).isDouble(), key);
            QVERIFY2(doc.object().value(key).toDouble() > 0, key);
        }
    }

    // --depth measures the decode after each depth of context, each against the
    // roofline (here stated, so the share is checkable); --profile prints the
    // backend's per-op table at exit.
    void benchByDepthAgainstAStatedRoofline() {
        auto r = cli({"bench", "-m", model_, "--depth", "0,48", "-n", "4", "-r", "1", "--roofline", "50", "--json",
                      "--threads", "2", "--profile"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto doc = QJsonDocument::fromJson(r.out.toUtf8());
        QVERIFY2(doc.isObject(), qPrintable(r.out));
        const QJsonObject o = doc.object();
        QCOMPARE(o.value("roofline_gb_s").toDouble(), 50.0);
        QCOMPARE(o.value("roofline_source").toString(), QStringLiteral("stated"));
        for (const char* depth : {"0", "48"}) {
            const QJsonObject d = o.value("depths").toObject().value(depth).toObject();
            QVERIFY2(d.value("decode_tok_s").toDouble() > 0, depth);
            const double gb = d.value("gb_s").toDouble();
            QVERIFY2(gb > 0, depth);
            QVERIFY2(qAbs(d.value("roofline_pct").toDouble() - 100.0 * gb / 50.0) < 0.01, depth);
        }
        // The top-level figures are the first depth's.
        QCOMPARE(o.value("decode_tok_s").toDouble(), o.value("depths").toObject().value("0").toObject().value("decode_tok_s").toDouble());
        QVERIFY2(r.err.contains("cpu op profile"), qPrintable(r.err));

        auto text = cli({"bench", "-m", model_, "--depth", "16", "-n", "2", "-r", "1", "--roofline", "50", "--threads", "2"});
        QVERIFY2(text.exitCode == 0, qPrintable(text.err));
        QVERIFY2(text.out.contains("roofline:") && text.out.contains("decode at depth 16") &&
                     text.out.contains("% of the roofline"),
                 qPrintable(text.out));
        QVERIFY2(!text.err.contains("cpu op profile"), qPrintable(text.err));  // only with --profile

        auto bad = cli({"bench", "-m", model_, "--depth", "0,x"});
        QVERIFY(bad.exitCode != 0);
        QVERIFY2(bad.err.contains("--depth"), qPrintable(bad.err));
    }

    // The KV-reuse benchmarks' JSON (issue 5's contract): per-history maps, the
    // restore pair and per-stream-count rates, with values that make sense.
    void kvBenchJsonHasTheContractKeys() {
        auto r = cli({"bench", "-m", model_, "--turns", "0,96", "--restore", "96", "--streams", "1,2", "--turn-tokens",
                      "16", "-n", "6", "-r", "1", "--json", "--threads", "2"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto doc = QJsonDocument::fromJson(r.out.toUtf8());
        QVERIFY2(doc.isObject(), qPrintable(r.out));
        const QJsonObject o = doc.object();
        for (const char* map : {"ttft_ms", "reprefill_ms"})
            for (const char* key : {"0", "96"}) {
                QVERIFY2(o.value(map).toObject().value(key).isDouble(), map);
                QVERIFY2(o.value(map).toObject().value(key).toDouble() > 0, map);
            }
        const QJsonObject restore = o.value("restore").toObject();
        QCOMPARE(restore.value("tokens").toInt(), 96);
        QCOMPARE(restore.value("restored").toInt(), 96);  // the snapshot was used, not re-prefilled
        QVERIFY(restore.value("restore_ms").toDouble() > 0 && restore.value("reprefill_ms").toDouble() > 0);
        for (const char* key : {"1", "2"}) {
            QVERIFY2(o.value("streams_tok_s").toObject().value(key).toDouble() > 0, key);
            const double occ = o.value("kv_occupancy").toObject().value(key).toDouble();
            QVERIFY2(occ > 0 && occ <= 1, key);
        }
        QVERIFY2(r.err.isEmpty() || !r.err.contains("error"), qPrintable(r.err));
    }

    void infoNamesTheArchitecture() {
        auto r = cli({"info", "-m", model_});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("architecture:    llama"));
        QVERIFY(r.out.contains("Q4_1"));
        QVERIFY(r.out.contains("49152"));
    }

    void templatePrintsThePromptExactly() {
        QTemporaryDir dir;
        const QString conv = dir.filePath("conv.json");
        QFile f(conv);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
                    "add_generation_prompt": true})");
        f.close();
        auto r = cli({"template", "-m", model_, "--messages", conv});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, QStringLiteral("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                                       "<|im_start|>assistant\n"));  // nothing added, no trailing newline
        auto ids = cli({"template", "-m", model_, "--messages", conv, "--tokens"});
        QCOMPARE(ids.exitCode, 0);
        QVERIFY2(ids.out.startsWith("1 9690 198"), qPrintable(ids.out));  // <|im_start|> system \n

        const QString gemma = kestrel::test::gemma3Path();
        if (QFileInfo::exists(gemma)) {
            // The template writes <bos> itself: exactly one BOS.
            auto g = cli({"template", "-m", gemma, "--messages", conv, "--tokens", "--template",
                          kestrel::test::sourceDir() + "/tests/data/templates/gemma3.jinja"});
            QCOMPARE(g.exitCode, 0);
            QVERIFY2(g.out.startsWith("2 105 ") , qPrintable(g.out));
        }
    }

    void errorsAreClearWithExitCodes() {
        auto unknown = cli({"generate", "--frobnicate"});
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY(unknown.err.contains("--frobnicate"));

        auto noPrompt = cli({"generate", "-m", model_});
        QCOMPARE(noPrompt.exitCode, 2);

        QTemporaryDir dir;
        const QString bad = dir.filePath("not-a-model.gguf");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("this is not a GGUF file at all, just text");
        f.close();
        auto badFile = cli({"info", "-m", bad});
        QCOMPARE(badFile.exitCode, 1);
        QVERIFY2(badFile.err.contains("not-a-model.gguf"), qPrintable(badFile.err));
        QVERIFY(badFile.out.isEmpty());

        auto badNumber = cli({"generate", "-m", model_, "-p", "x", "-n", "ten"});
        QCOMPARE(badNumber.exitCode, 2);
        QVERIFY(badNumber.err.contains("ten"));
    }
};

QTEST_GUILESS_MAIN(TstCli)
#include "tst_cli.moc"
