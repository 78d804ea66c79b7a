// Where tests find models and reference data, shared by every suite.
//
// Models: $KESTREL_MODELS_DIR, else $XDG_DATA_HOME/kestrel/models, else
// ~/.local/share/kestrel/models (where scripts/fetch-models.sh puts them).
// A suite that needs a missing model QSKIPs with the command that fetches it,
// so a skip is visible, never a silent pass.
#pragma once

#include <QDir>
#include <QFileInfo>
#include <QString>
#include <QtTest>

namespace kestrel::test {

inline QString modelsDir() {
    const QByteArray env = qgetenv("KESTREL_MODELS_DIR");
    if (!env.isEmpty()) return QString::fromLocal8Bit(env);
    const QByteArray xdg = qgetenv("XDG_DATA_HOME");
    const QString base = xdg.isEmpty() ? QDir::homePath() + "/.local/share" : QString::fromLocal8Bit(xdg);
    return base + "/kestrel/models";
}

inline QString smollm2Path() { return modelsDir() + "/SmolLM2-135M-Instruct.Q4_1.gguf"; }
inline QString gemma3Path() { return modelsDir() + "/gemma-3-270m-q4_k_m.gguf"; }

// Reference data written by the ctest fixtures (tests/reference/*.py).
inline QString testDataDir() { return QString::fromLocal8Bit(qgetenv("KESTREL_TEST_DATA")); }
inline QString sourceDir() { return QString::fromLocal8Bit(qgetenv("KESTREL_SOURCE_DIR")); }

}  // namespace kestrel::test

#define KESTREL_REQUIRE_MODEL(path)                                                             \
    do {                                                                                        \
        if (!QFileInfo::exists(path))                                                           \
            QSKIP(qPrintable(QStringLiteral("model %1 missing; run scripts/fetch-models.sh --all") \
                                 .arg(path)));                                                  \
    } while (0)
