// Real chat templates (tests/data/templates/*.jinja) over every conversation
// (tests/data/templates/conversations/*.json), compared byte for byte with Python jinja2
// configured as transformers configures it. The expected renders are written by the
// template_reference fixture (tests/reference/template_reference.py) to
// $KESTREL_TEST_DATA/templates. Bound: identical bytes; where jinja2 fails, Kestrel fails too,
// and where the template called raise_exception, Kestrel's error carries the same message.
#include "template/chat_template.h"
#include "template/json_value.h"
#include "test_env.h"

#include <QFile>
#include <QtTest>

using namespace kestrel;

namespace {

QByteArray readAll(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

std::string unescapeDetail(const QString& s) {
    std::string in = s.toStdString(), out;
    for (size_t i = 0; i < in.size(); ++i) {
        if (in[i] == '\\' && i + 1 < in.size()) {
            const char e = in[++i];
            out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        } else {
            out += in[i];
        }
    }
    return out;
}

QString describeMismatch(const std::string& got, const std::string& want) {
    size_t i = 0;
    int line = 1, column = 1;
    while (i < got.size() && i < want.size() && got[i] == want[i]) {
        if (got[i] == '\n') { ++line; column = 1; } else { ++column; }
        ++i;
    }
    auto snippet = [&](const std::string& s) {
        const size_t from = i > 40 ? i - 40 : 0;
        QString q = QString::fromUtf8(s.substr(from, 100).c_str());
        q.replace("\n", "\\n");
        return q;
    };
    return QStringLiteral("renders differ at byte %1 (line %2, column %3); sizes %4 vs %5 (Kestrel vs jinja2)\n"
                          "  kestrel: %6\n  jinja2:  %7")
        .arg(i).arg(line).arg(column).arg(got.size()).arg(want.size()).arg(snippet(got), snippet(want));
}

// The BOS / EOS texts tokens.json gives `family`'s models, into the context.
void useFamilyTokens(TemplateContext& context, const jinja::Value& tokens, const std::string& family) {
    const jinja::Value* t = tokens.asDict().get(family);
    if (!t || !t->isDict()) return;
    if (const jinja::Value* b = t->asDict().get("bos_token")) context.bosToken = b->asString();
    if (const jinja::Value* e = t->asDict().get("eos_token")) context.eosToken = e->asString();
}

}  // namespace

class TstChatTemplate : public QObject {
    Q_OBJECT
private slots:
    void matchesJinja2_data() {
        QTest::addColumn<QString>("templateName");
        QTest::addColumn<QString>("conversation");
        QTest::addColumn<QString>("outcome");
        QTest::addColumn<QString>("detail");
        const QByteArray manifest = readAll(test::testDataDir() + "/templates/manifest.tsv");
        if (manifest.isEmpty()) {
            QTest::newRow("missing") << QString() << QString() << QString() << QString();
            return;
        }
        for (const QByteArray& line : manifest.split('\n')) {
            const QList<QByteArray> f = line.split('\t');
            if (f.size() != 4) continue;
            const QString name = QString::fromUtf8(f[0]), conv = QString::fromUtf8(f[1]);
            QTest::newRow(qPrintable(name + "/" + conv)) << name << conv << QString::fromUtf8(f[2])
                                                         << QString::fromUtf8(f[3]);
        }
    }

    void matchesJinja2() {
        QFETCH(QString, templateName);
        QFETCH(QString, conversation);
        QFETCH(QString, outcome);
        QFETCH(QString, detail);
        if (templateName.isEmpty())
            QSKIP("no expected renders: run ctest (fixture template_reference) or "
                  "tests/reference/template_reference.py; it needs jinja2 (tests/reference/requirements.txt)");
        const QString data = test::sourceDir() + "/tests/data/templates";
        const QByteArray source = readAll(data + "/" + templateName + ".jinja");
        QVERIFY(!source.isEmpty());
        auto tmpl = ChatTemplate::parse(source.toStdString());
        QVERIFY2(tmpl.isOk(), tmpl.status().message().c_str());

        auto context = TemplateContext::fromJson(readAll(data + "/conversations/" + conversation + ".json").toStdString());
        QVERIFY2(context.isOk(), context.status().message().c_str());
        auto tokens = jinja::parseJson(readAll(data + "/tokens.json").toStdString());
        QVERIFY2(tokens.isOk(), tokens.status().message().c_str());
        useFamilyTokens(*context, *tokens, templateName.toStdString());

        auto out = tmpl->render(*context);
        if (outcome == "ok") {
            QVERIFY2(out.isOk(), out.status().message().c_str());
            const QByteArray want = readAll(test::testDataDir() + "/templates/" + detail);
            QVERIFY2(*out == want.toStdString(), qPrintable(describeMismatch(*out, want.toStdString())));
            return;
        }
        QVERIFY2(!out.isOk(), qPrintable("jinja2 failed (" + detail + ") but Kestrel rendered it"));
        if (outcome == "raise") {
            const std::string message = unescapeDetail(detail);
            QVERIFY2(out.status().message().find(message) != std::string::npos,
                     qPrintable(QString::fromStdString(out.status().message()) + " lacks: " + detail));
        }
    }

    // The built-in formats a model without a template falls back to render what their
    // family's own template renders (which matchesJinja2 holds to jinja2), less the BOS
    // text the family's template writes and the tokenizer adds instead.
    void builtInFormatsRenderAsTheirFamiliesDo() {
        const QString data = test::sourceDir() + "/tests/data/templates";
        auto tokens = jinja::parseJson(readAll(data + "/tokens.json").toStdString());
        QVERIFY2(tokens.isOk(), tokens.status().message().c_str());
        int compared = 0;
        for (const BuiltInTemplate& builtIn : builtInTemplates()) {
            const std::string name = builtIn.name;
            const char* family = name == "Gemma" ? "gemma3" : name == "Llama 3" ? "llama3" : "chatml";
            auto own = ChatTemplate::parse(readAll(data + "/" + family + ".jinja").toStdString());
            auto mine = ChatTemplate::parse(builtIn.source);
            QVERIFY2(own.isOk() && mine.isOk(), family);
            for (const char* conversation : {"basic", "system_multiturn", "no_generation_prompt", "unicode_whitespace"}) {
                auto context = TemplateContext::fromJson(
                    readAll(data + "/conversations/" + conversation + ".json").toStdString());
                QVERIFY2(context.isOk(), conversation);
                useFamilyTokens(*context, *tokens, family);
                auto want = own->render(*context);
                auto got = mine->render(*context);
                QVERIFY2(want.isOk() && got.isOk(), qPrintable(QString(family) + "/" + conversation));
                // ChatML's reference template writes no BOS either.
                const std::string bos = name == "ChatML" ? std::string() : context->bosToken.value_or("");
                QVERIFY2(bos + *got == *want, qPrintable(QString(family) + "/" + conversation + ": " +
                                                         describeMismatch(bos + *got, *want)));
                ++compared;
            }
            QVERIFY(!builtIn.stops.empty());
        }
        QCOMPARE(compared, 12);
        QVERIFY(builtInTemplates().back().markers.empty());  // the last fits any model
    }

    // The templates this suite covers include every model Kestrel tests with.
    void coversTheRequiredFamilies() {
        const QString data = test::sourceDir() + "/tests/data/templates";
        int count = 0;
        for (const char* name : {"smollm2", "gemma3", "chatml", "llama3.1", "llama3.2", "qwen2.5", "qwen3",
                                 "mistral-v0.3", "gemma2", "phi3", "phi4", "deepseek-r1-distill"}) {
            QVERIFY2(QFile::exists(data + "/" + name + ".jinja"), name);
            ++count;
        }
        QVERIFY(QDir(data).entryList({"*.jinja"}).size() >= 15);
        QVERIFY(count > 0);
    }
};

QTEST_APPLESS_MAIN(TstChatTemplate)
#include "tst_chat_template.moc"
