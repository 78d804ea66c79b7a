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
    // Real models against the NumPy reference (the fixture model_reference_data
    // writes it), with the CPU's int8-activation bounds and near-tie rule.
    void smollm2MatchesNumpy() {
        REQUIRE_GPU();
        KESTREL_REQUIRE_MODEL(kestrel::test::smollm2Path());
#ifndef KESTREL_NO_CUDA
        const std::string path = kestrel::test::smollm2Path().toStdString();
        verifyAll(kestrel::cudatest::runReferenceCheck(path, (kestrel::test::testDataDir() + "/model_ref_smollm2").toStdString()));
        verifyAll(kestrel::cudatest::runKvReuseCheck(path));
#endif
    }
    void gemma3MatchesNumpy() {
        REQUIRE_GPU();
        KESTREL_REQUIRE_MODEL(kestrel::test::gemma3Path());
#ifndef KESTREL_NO_CUDA
        verifyAll(kestrel::cudatest::runReferenceCheck(kestrel::test::gemma3Path().toStdString(),
                                                       (kestrel::test::testDataDir() + "/model_ref_gemma3").toStdString()));
#endif
    }
};

QTEST_APPLESS_MAIN(TstCudaBackend)
#include "tst_cuda_backend.moc"
