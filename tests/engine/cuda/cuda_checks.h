// The CUDA backend checked against the CPU backend, without Qt: shared by the
// Qt Test suite (tst_cuda_backend.cpp, label gpu) and the plain runner
// (kestrel-cuda-check, for GPU machines without Qt).
//
// Every check runs one op (or a fused sequence) on both backends with the
// same random inputs of awkward sizes, outputs poisoned with NaN first, and
// compares by normalised error ||gpu - cpu|| / ||cpu|| against a stated bound.
// A NaN anywhere (an unwritten output) fails.
#pragma once

#include "finding.h"

#include <string>
#include <vector>

namespace kestrel::cudatest {

using CheckResult = test::Finding;

// Empty with `whyNot` set when no usable GPU is present (the caller skips).
bool gpuAvailable(std::string& whyNot);

std::vector<CheckResult> runOpChecks(unsigned seed);

// Loads `ggufPath` on both backends; prefill + greedy decode, comparing logits
// at every step (graph replay included). `decodeSteps` tokens. Its 5e-2 bound
// holds for the synthetic files of `kestrel-cli synth` (random weights); real
// models take runReferenceCheck (below says why).
std::vector<CheckResult> runModelCheck(const std::string& ggufPath, int decodeSteps);

// A real model on the GPU against the NumPy reference (tests/common/reference_check.h;
// `referenceBase` is what tests/reference/model_reference.py wrote, e.g.
// $KESTREL_TEST_DATA/model_ref_smollm2): the same prompts, bounds and near-tie rule
// as the CPU's int8-activation numerics in tst_model_reference. Why not the CPU as
// the reference: both round activations to int8, each its own way, and on a real
// model each path alone is ~4e-2 from the exact logits, so two correct paths may
// differ by the sum of their errors (measured: up to 1.4e-1 on Gemma 3). Against the
// reference, measured on an H100: last-position logits 1.8-3.1e-2 (SmolLM2) and
// 2.4-2.9e-2 (Gemma 3), the CPU's int8 path 1.9-3.5e-2 and 2.0-4.7e-2; greedy
// continuations part only at reference margins of 0.003-0.32.
std::vector<CheckResult> runReferenceCheck(const std::string& ggufPath, const std::string& referenceBase);

// cuda_kv_checks.cpp: the model's shared paged KV pool on the GPU: reuse of a
// cached prefix, copy-on-write forks and a three-sequence batch against
// from-scratch GPU runs.
std::vector<CheckResult> runKvReuseCheck(const std::string& ggufPath);

}  // namespace kestrel::cudatest
