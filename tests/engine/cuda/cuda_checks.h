// The CUDA backend checked against the CPU backend, without Qt: shared by the
// Qt Test suite (tst_cuda_backend.cpp, label gpu) and the plain runner
// (kestrel-cuda-check, for GPU machines without Qt).
//
// Every check runs one op (or a fused sequence) on both backends with the
// same random inputs of awkward sizes, outputs poisoned with NaN first, and
// compares by normalised error ||gpu - cpu|| / ||cpu|| against a stated bound.
// A NaN anywhere (an unwritten output) fails.
#pragma once

#include <string>
#include <vector>

namespace kestrel::cudatest {

struct CheckResult {
    std::string name;
    double error = 0.0;  // normalised error (or the failing quantity)
    double bound = 0.0;
    bool ok = false;
    std::string note;
};

// Empty with `whyNot` set when no usable GPU is present (the caller skips).
bool gpuAvailable(std::string& whyNot);

std::vector<CheckResult> runOpChecks(unsigned seed);

// Loads `ggufPath` on both backends; prefill + greedy decode, comparing logits
// at every step (graph replay included). `decodeSteps` tokens.
std::vector<CheckResult> runModelCheck(const std::string& ggufPath, int decodeSteps);

// cuda_kv_checks.cpp: the model's shared paged KV pool on the GPU: reuse of a
// cached prefix, copy-on-write forks and a three-sequence batch against
// from-scratch GPU runs.
std::vector<CheckResult> runKvReuseCheck(const std::string& ggufPath);

}  // namespace kestrel::cudatest
