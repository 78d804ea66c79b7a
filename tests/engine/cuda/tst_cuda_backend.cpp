// The CUDA backend against the CPU backend (label gpu). Skips, visibly, when
// the build has no CUDA or the machine no GPU. The checks themselves live in
// cuda_checks.cpp, shared with the Qt-free runner kestrel-cuda-check.
#include "test_env.h"

#include <QtTest>

#ifndef KESTREL_NO_CUDA
#include "cuda_checks.h"
#endif

// A macro, not a function: QSKIP must return from the test function itself.
#ifdef KESTREL_NO_CUDA
#define REQUIRE_GPU() QSKIP("this build has no CUDA backend (configured without a CUDA compiler)")
#else
#define REQUIRE_GPU()                                                                                        \
    do {                                                                                                     \
        std::string why;                                                                                     \
        if (!kestrel::cudatest::gpuAvailable(why)) QSKIP(qPrintable(QString::fromStdString("no usable GPU: " + why))); \
    } while (0)
#endif

class TstCudaBackend : public QObject {
    Q_OBJECT

private:
#ifndef KESTREL_NO_CUDA
    static void verifyAll(const std::vector<kestrel::cudatest::CheckResult>& results) {
        QVERIFY(!results.empty());
        for (const auto& r : results) {
            const QString msg = QString::fromStdString(r.name) + QStringLiteral(": error %1 > bound %2 ").arg(r.error).arg(r.bound) +
                                QString::fromStdString(r.note);
            QVERIFY2(r.ok, qPrintable(msg));
        }
    }
#endif

private slots:
    void opsMatchCpu() {
        REQUIRE_GPU();
#ifndef KESTREL_NO_CUDA
        verifyAll(kestrel::cudatest::runOpChecks(20261202u));
#endif
    }
    void smollm2LogitsMatchCpu() {
        REQUIRE_GPU();
        KESTREL_REQUIRE_MODEL(kestrel::test::smollm2Path());
#ifndef KESTREL_NO_CUDA
        verifyAll(kestrel::cudatest::runModelCheck(kestrel::test::smollm2Path().toStdString(), 16));
        verifyAll(kestrel::cudatest::runKvReuseCheck(kestrel::test::smollm2Path().toStdString()));
#endif
    }
    void gemma3LogitsMatchCpu() {
        REQUIRE_GPU();
        KESTREL_REQUIRE_MODEL(kestrel::test::gemma3Path());
#ifndef KESTREL_NO_CUDA
        verifyAll(kestrel::cudatest::runModelCheck(kestrel::test::gemma3Path().toStdString(), 16));
#endif
    }
};

QTEST_APPLESS_MAIN(TstCudaBackend)
#include "tst_cuda_backend.moc"
