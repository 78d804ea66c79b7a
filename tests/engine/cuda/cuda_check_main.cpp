// kestrel-cuda-check: the CUDA-vs-CPU checks without Qt, for GPU machines
// that have no Qt (the Qt Test suite tst_cuda_backend runs the same checks).
// Usage: kestrel-cuda-check [--model FILE.gguf] [--reference FILE.gguf=BASE] [--steps N] [--seed S] [--no-ops]
// --model: CUDA against the CPU, for synthetic files (kestrel-cli synth); --reference: a real
// model against the NumPy reference that tests/reference/model_reference.py wrote to BASE.txt
// and BASE_logits<i>.f32 (runReferenceCheck; cuda_checks.h says why real models need it).
// Exit: 0 all passed, 1 a check failed, 77 no usable GPU (skipped).
#include "cuda_checks.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    std::vector<std::string> models, references;
    int steps = 24;
    unsigned seed = 1234;
    bool ops = true;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--model" && i + 1 < argc) models.push_back(argv[++i]);
        else if (a == "--reference" && i + 1 < argc && std::strchr(argv[i + 1], '=')) references.push_back(argv[++i]);
        else if (a == "--steps" && i + 1 < argc) steps = std::atoi(argv[++i]);
        else if (a == "--seed" && i + 1 < argc) seed = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (a == "--no-ops") ops = false;
        else {
            std::fprintf(stderr, "usage: kestrel-cuda-check [--model FILE] [--reference FILE=BASE] [--steps N] [--seed S] [--no-ops]\n");
            return 2;
        }
    }
    std::string why;
    if (!kestrel::cudatest::gpuAvailable(why)) {
        std::printf("SKIP: no usable GPU: %s\n", why.c_str());
        return 77;
    }
    std::vector<kestrel::cudatest::CheckResult> results;
    if (ops) results = kestrel::cudatest::runOpChecks(seed);
    for (const auto& m : models) {
        auto r = kestrel::cudatest::runModelCheck(m, steps);
        auto kv = kestrel::cudatest::runKvReuseCheck(m);
        r.insert(r.end(), kv.begin(), kv.end());
        for (auto& x : r) x.name = m.substr(m.find_last_of('/') + 1) + ": " + x.name;
        results.insert(results.end(), r.begin(), r.end());
    }
    for (const auto& pair : references) {
        const size_t eq = pair.find('=');
        const std::string m = pair.substr(0, eq);
        auto r = kestrel::cudatest::runReferenceCheck(m, pair.substr(eq + 1));
        for (auto& x : r) x.name = m.substr(m.find_last_of('/') + 1) + " vs NumPy: " + x.name;
        results.insert(results.end(), r.begin(), r.end());
    }
    int failed = 0;
    for (const auto& r : results) {
        failed += !r.ok;
        std::printf("%-4s %-70s err %.3e  bound %.1e  %s\n", r.ok ? "ok" : "FAIL", r.name.c_str(), r.error, r.bound,
                    r.note.c_str());
    }
    std::printf("%zu checks, %d failed\n", results.size(), failed);
    return failed ? 1 : 0;
}
