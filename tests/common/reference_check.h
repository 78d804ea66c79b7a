// A model's logits against the NumPy reference (tests/reference/model_reference.py,
// which writes <base>.txt, <base>.json and <base>_logits<i>.f32), without Qt:
// shared by tst_model_reference and tst_model_synthetic (CPU backend) and the CUDA
// checks (tst_cuda_backend and kestrel-cuda-check, for GPU machines without Qt).
//
// Per reference prompt: the last position's (or every position's) logits within a
// bound of the reference (max |mine - ref| / max |ref|), the top-1 token at every prompt
// position and the greedy continuation equal to the reference's. A difference
// is accepted only at a near-tie (the reference's top-2 margin below the rule's
// tie) and is reported: with int8 activations any tiny difference of the inputs
// moves the logits by a few percent (tst_model_reference's header says how much),
// so two correct implementations may part where the reference itself barely chose.
#pragma once

#include "finding.h"
#include "gguf_file.h"
#include "loaded_model.h"
#include "model_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace kestrel::test {

inline Result<std::shared_ptr<model::LoadedModel>> loadModelFile(const std::string& path, backend::Backend& be) {
    auto file = gguf::GgufFile::open(path);
    if (!file) return file.status();
    return model::LoadedModel::load(std::shared_ptr<gguf::GgufFile>(std::move(file).value()), be);
}

inline std::vector<float> readF32File(const std::string& path) {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f) return {};
    std::vector<float> v(static_cast<size_t>(f.tellg()) / sizeof(float));
    f.seekg(0);
    f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
    return f ? v : std::vector<float>{};
}

// max |a - ref| / max |ref| (infinite when a holds a non-finite value)
inline double normalisedError(const float* a, const float* ref, size_t n) {
    double d = 0, m = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!std::isfinite(a[i])) return INFINITY;
        d = std::max(d, std::abs(double(a[i]) - ref[i]));
        m = std::max(m, std::abs(double(ref[i])));
    }
    return m > 0 ? d / m : d;
}

inline int argmax(const float* v, int n) { return int(std::max_element(v, v + n) - v); }

// One prompt of the reference: its tokens, the top-1 token at every position with
// the margin to the second, and the greedy continuation with the margin at each step.
struct ReferencePrompt {
    std::vector<int32_t> tokens, top1, greedy;
    std::vector<double> top1Margins, greedyMargins;
};

// <base>.txt: lines "field index values..." (empty when missing or malformed).
inline std::vector<ReferencePrompt> readReference(const std::string& base) {
    std::ifstream f(base + ".txt");
    std::vector<ReferencePrompt> out;
    std::string line;
    while (std::getline(f, line)) {
        std::istringstream in(line);
        std::string field;
        size_t i = 0;
        if (!(in >> field >> i) || i > out.size() + 1000) return {};
        if (out.size() <= i) out.resize(i + 1);
        ReferencePrompt& p = out[i];
        auto ints = [&](std::vector<int32_t>& v) { for (int32_t x; in >> x;) v.push_back(x); };
        auto reals = [&](std::vector<double>& v) { for (double x; in >> x;) v.push_back(x); };
        if (field == "prompts") ints(p.tokens);
        else if (field == "top1") ints(p.top1);
        else if (field == "greedy") ints(p.greedy);
        else if (field == "top1_margins") reals(p.top1Margins);
        else if (field == "margins") reals(p.greedyMargins);
    }
    for (const ReferencePrompt& p : out)
        if (p.tokens.empty() || p.top1.size() != p.tokens.size() || p.top1Margins.size() != p.tokens.size() ||
            p.greedyMargins.size() != p.greedy.size())
            return {};
    return out;
}

// How the reference prompts run: one sequence; the longest prompts (21 tokens)
// prefill in two chunks, as the app's prefill does with longer ones.
inline model::RunnerOptions referenceRunnerOptions() {
    model::RunnerOptions ro;
    ro.contextLength = 256;
    ro.maxBatch = 16;
    return ro;
}

struct ReferenceRule {
    double bound = 5e-2;      // logits, max |mine - ref| / max |ref|
    double tie = 0.5;         // near-tie: a reference top-2 margin below this (logits)...
    double tieOfMax = 0.0;    // ...or, when > 0, below this times max |reference logit|
    // Every position's logits (<base>_all<i>.f32, which the reference writes for small
    // models) instead of the last position's.
    bool allPositions = false;
};

// Runs every prompt of `ref` through `model` on `be`, a fresh runner from `ro` each.
inline std::vector<Finding> checkAgainstReference(const std::shared_ptr<model::LoadedModel>& model, backend::Backend& be,
                                                  const model::RunnerOptions& ro, const std::string& base,
                                                  const std::vector<ReferencePrompt>& ref, const ReferenceRule& rule) {
    std::vector<Finding> out;
    const int vocab = model->config().vocabSize;
    for (size_t pi = 0; pi < ref.size(); ++pi) {
        const ReferencePrompt& rp = ref[pi];
        const std::string at = "prompt " + std::to_string(pi) + " (" + std::to_string(rp.tokens.size()) + " tokens)";
        auto runner = model::ModelRunner::create(model, be, ro);
        if (!runner) {
            out.push_back({at + ": runner", 0, 0, false, runner.status().toString()});
            continue;
        }
        std::vector<float> logits;
        if (const Status s = runner.value()->forward(rp.tokens, model::LogitsMode::All, logits); !s.isOk()) {
            out.push_back({at + ": prefill", 0, 0, false, s.toString()});
            continue;
        }
        const std::string refFile = base + (rule.allPositions ? "_all" : "_logits") + std::to_string(pi) + ".f32";
        const std::vector<float> expected = readF32File(refFile);
        const size_t positions = rule.allPositions ? rp.tokens.size() : 1;
        if (expected.size() != positions * size_t(vocab)) {
            out.push_back({at + ": reference logits", 0, 0, false, refFile});
            continue;
        }
        const float* mine = logits.data() + (rp.tokens.size() - 1) * vocab;  // the last position's
        double maxRef = 0;
        for (float x : expected) maxRef = std::max(maxRef, double(std::abs(x)));
        const double tie = rule.tieOfMax > 0 ? rule.tieOfMax * maxRef : rule.tie;
        char buf[160];

        const double err = normalisedError(logits.data() + (rp.tokens.size() - positions) * vocab, expected.data(),
                                           expected.size());
        out.push_back({at + (rule.allPositions ? ": all-position logits" : ": last-position logits"), err, rule.bound,
                       err < rule.bound, ""});

        Finding top{at + ": top-1 at every position", 0, tie, true, ""};
        int agree = 0;
        for (size_t t = 0; t < rp.tokens.size(); ++t) {
            const int got = argmax(logits.data() + t * vocab, vocab);
            if (got == rp.top1[t]) {
                ++agree;
                continue;
            }
            std::snprintf(buf, sizeof buf, "; position %zu: %d vs %d (reference margin %.3g)", t, got, rp.top1[t],
                          rp.top1Margins[t]);
            top.note += buf;
            top.error = std::max(top.error, rp.top1Margins[t]);
            top.ok = top.ok && rp.top1Margins[t] < tie;
        }
        top.note = std::to_string(agree) + "/" + std::to_string(rp.tokens.size()) + " agree" + top.note;
        out.push_back(top);

        Finding greedy{at + ": greedy continuation", 0, tie, true, ""};
        int32_t next = argmax(mine, vocab);
        size_t same = 0;
        for (; same < rp.greedy.size(); ++same) {
            if (next != rp.greedy[same]) {
                const double m = same == 0 ? rp.top1Margins.back() : rp.greedyMargins[same - 1];
                std::snprintf(buf, sizeof buf, "; diverges at token %zu (reference margin %.3g)", same, m);
                greedy.note = buf;
                greedy.error = m;
                greedy.ok = m < tie;
                break;
            }
            if (!runner.value()->forward({&next, 1}, model::LogitsMode::LastOnly, logits).isOk()) {
                greedy.ok = false;
                greedy.note = "; decode failed";
                break;
            }
            next = argmax(logits.data(), vocab);
        }
        greedy.note = std::to_string(same) + "/" + std::to_string(rp.greedy.size()) + " identical" + greedy.note;
        out.push_back(greedy);
    }
    return out;
}

}  // namespace kestrel::test
