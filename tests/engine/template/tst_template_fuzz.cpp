// Random mutations of the real templates (tests/data/templates): parse and render must
// return (a result or an error) for every one, never crash, hang or overflow the stack.
// Seeded, so a failure reproduces; the seed and mutation index are in the failure message.
#include "template/chat_template.h"
#include "test_env.h"

#include <QDir>
#include <QFile>
#include <QtTest>

#include <random>
#include <string>
#include <vector>

using namespace kestrel;

namespace {

const char* const kFragments[] = {
    "{%", "%}", "{{", "}}", "{#", "#}", "{%-", "-%}", "{{-", "-}}", "(", ")", "[", "]", "{", "}", "'", "\"",
    "\\", "|", ".", ",", ":", " is ", " not ", " in ", " and ", " or ", " if ", " else ", "for x in messages",
    "endfor", "endif", "{% if x %}", "{% endif %}", "{% for m in messages %}", "{% endfor %}", "loop.index",
    "| tojson", "| trim", "[::-1]", "[1:]", "**", "//", "%", "~", "-", "+", "*", "namespace(a=1)", "ns.a",
    "{% macro f(a, b=1) %}", "{% endmacro %}", "f(1)", "caller()", "{% raw %}", "{% endraw %}", "range(99999)",
    "{% set x = %}", "{% break %}", "{% continue %}", "none", "true", "1e308", "9223372036854775807", "é", "\n",
};

std::string mutate(std::string s, std::mt19937& rng) {
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
        const size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
        switch (rng() % 5) {
            case 0: {  // delete a range
                const size_t n = std::min<size_t>(s.size() - std::min(pos, s.size()), rng() % 12);
                s.erase(std::min(pos, s.size()), n);
                break;
            }
            case 1:  // insert a fragment
                s.insert(pos, kFragments[rng() % std::size(kFragments)]);
                break;
            case 2: {  // duplicate a range
                const size_t n = std::min<size_t>(s.size() - std::min(pos, s.size()), rng() % 40);
                s.insert(pos, s.substr(std::min(pos, s.size()), n));
                break;
            }
            case 3:  // flip a byte
                if (!s.empty()) s[std::min(pos, s.size() - 1)] = static_cast<char>(rng() % 256);
                break;
            default: {  // swap two ranges' starts
                if (s.size() < 2) break;
                const size_t other = rng() % s.size();
                std::swap(s[std::min(pos, s.size() - 1)], s[other]);
            }
        }
    }
    return s;
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TstTemplateFuzz : public QObject {
    Q_OBJECT
private slots:
    void mutatedTemplatesNeverCrash() {
        const QString data = test::sourceDir() + "/tests/data/templates";
        const QStringList names = QDir(data).entryList({"*.jinja"}, QDir::Files, QDir::Name);
        QVERIFY(names.size() >= 15);
        std::vector<TemplateContext> contexts;
        for (const char* conv : {"system_multiturn", "tools", "reasoning"}) {
            auto c = TemplateContext::fromJson(readAll(data + "/conversations/" + conv + ".json").toStdString());
            QVERIFY2(c.isOk(), c.status().message().c_str());
            c->bosToken = "<s>";
            c->eosToken = "</s>";
            contexts.push_back(std::move(*c));
        }
        TemplateLimits limits;
        limits.render.maxSteps = 200000;  // keeps mutants that loop cheap; the limit itself is tested elsewhere
        // KESTREL_FUZZ_SEED / KESTREL_FUZZ_ITERATIONS (mutants per template) widen a local run.
        const uint32_t seed = qEnvironmentVariableIsSet("KESTREL_FUZZ_SEED")
                                  ? static_cast<uint32_t>(qEnvironmentVariableIntValue("KESTREL_FUZZ_SEED"))
                                  : 20261202u;
        std::mt19937 rng(seed);
        const int perTemplate = qEnvironmentVariableIsSet("KESTREL_FUZZ_ITERATIONS")
                                    ? qEnvironmentVariableIntValue("KESTREL_FUZZ_ITERATIONS")
                                    : 250;
        int parsed = 0, rendered = 0, total = 0;
        for (const QString& name : names) {
            const std::string original = readAll(data + "/" + name).toStdString();
            for (int i = 0; i < perTemplate; ++i, ++total) {
                const std::string mutant = mutate(original, rng);
                auto t = ChatTemplate::parse(mutant, limits);
                if (!t) {
                    QVERIFY2(!t.status().message().empty(), qPrintable(name));
                    continue;
                }
                ++parsed;
                auto out = t->render(contexts[static_cast<size_t>(i) % contexts.size()]);
                if (out) ++rendered;
                else QVERIFY2(!out.status().message().empty(), qPrintable(QStringLiteral("%1 #%2").arg(name).arg(i)));
            }
        }
        qInfo("fuzz: seed %u, %d mutants, %d parsed, %d rendered", seed, total, parsed, rendered);
        QVERIFY(parsed > total / 10);  // the mutations exercise the renderer, not only the parser
    }

    void randomBytesNeverCrash() {
        std::mt19937 rng(7);
        for (int i = 0; i < 2000; ++i) {
            std::string s;
            const int n = static_cast<int>(rng() % 200);
            for (int k = 0; k < n; ++k)
                s += (rng() % 3 == 0) ? kFragments[rng() % std::size(kFragments)] : std::string(1, static_cast<char>(rng() % 256));
            auto t = ChatTemplate::parse(s);
            if (t) (void)t->render(TemplateContext{});
        }
        QVERIFY(true);
    }
};

QTEST_APPLESS_MAIN(TstTemplateFuzz)
#include "tst_template_fuzz.moc"
