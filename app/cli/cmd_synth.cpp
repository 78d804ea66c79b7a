// kestrel-cli synth: writes a complete llama-architecture GGUF with random
// weights, so benchmarks of large shapes need no downloaded model.
//
// Weights are normal(0, 1/sqrt(fan_in)) before quantisation, so each matmul
// roughly preserves the scale of its input and the residual stream stays
// finite through 80 layers; norm gammas are ~1. The vocabulary is a real
// gpt2 byte-level BPE vocabulary (256 byte tokens, generated merges whose
// results are tokens, control tokens at the end), so our tokenizer and other
// GGUF readers accept the file. Quantisation runs on every core: an 8B model
// takes seconds, not minutes.
#include "commands.h"
#include "gguf_writer.h"
#include "matmul.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>
#include <thread>
#include <unordered_set>
#include <vector>

namespace kestrel::cli {
namespace {

struct Shape {
    const char* name;
    int layers, embd, ff, heads, kvHeads, vocab, context;
    float ropeBase;
    bool tied;
};

constexpr Shape kShapes[] = {
    {"llama3-8b", 32, 4096, 14336, 32, 8, 128256, 8192, 500000.0f, false},
    {"llama2-7b", 32, 4096, 11008, 32, 32, 32000, 4096, 10000.0f, false},
    {"llama3-70b", 80, 8192, 28672, 64, 8, 128256, 8192, 500000.0f, false},
    {"smollm2-135m", 30, 576, 1536, 9, 3, 49152, 8192, 100000.0f, true},
};

struct TypeName {
    const char* name;
    GgmlType type;
};
constexpr TypeName kTypes[] = {{"q4_0", GgmlType::Q4_0}, {"q4_1", GgmlType::Q4_1}, {"q8_0", GgmlType::Q8_0},
                               {"f16", GgmlType::F16},   {"q4_k", GgmlType::Q4_K}, {"q5_0", GgmlType::Q5_0},
                               {"q6_k", GgmlType::Q6_K}, {"f32", GgmlType::F32},   {"q5_1", GgmlType::Q5_1},
                               {"q5_k", GgmlType::Q5_K}};

// splitmix64: a fast, well-mixed generator; one stream per row makes the file
// independent of the thread count.
struct Rng {
    uint64_t s;
    uint64_t next() {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }
    // Sum of four uniforms, rescaled to unit variance: close enough to normal
    // for weights, and several times cheaper than Box-Muller.
    float normal() {
        const uint64_t a = next(), b = next();
        const float u = static_cast<float>(a & 0xffffffu) + static_cast<float>((a >> 32) & 0xffffffu) +
                        static_cast<float>(b & 0xffffffu) + static_cast<float>((b >> 32) & 0xffffffu);
        return (u * (1.0f / 16777216.0f) - 2.0f) * 1.7320508f;
    }
};

// gpt2's byte -> printable code point table, UTF-8 encoded.
std::vector<std::string> byteTokens() {
    std::vector<std::string> out(256);
    auto utf8 = [](uint32_t cp) {
        std::string s;
        if (cp < 0x80) {
            s += static_cast<char>(cp);
        } else {
            s += static_cast<char>(0xc0 | (cp >> 6));
            s += static_cast<char>(0x80 | (cp & 0x3f));
        }
        return s;
    };
    uint32_t extra = 0;
    for (uint32_t b = 0; b < 256; ++b) {
        const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
        out[b] = utf8(printable ? b : 256 + extra++);
    }
    return out;
}

struct Vocab {
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    std::vector<std::string> merges;
    int32_t bos = 0, eos = 0;
};

// Merges are generated in rank order: each one joins two existing tokens whose
// concatenation is new, with a bias toward short, letter-like tokens so the
// vocabulary looks like text BPE (ordinary text tokenises into few pieces).
Vocab makeVocab(int size, uint64_t seed) {
    Vocab v;
    v.tokens = byteTokens();
    const int specials = 8;
    const int mergeCount = std::max(0, size - 256 - specials);
    std::unordered_set<std::string> seen(v.tokens.begin(), v.tokens.end());
    Rng rng{seed ^ 0x5eedull};
    std::vector<int> letters;
    for (int b = 'a'; b <= 'z'; ++b) letters.push_back(b);
    letters.push_back(0x20);  // the space byte ('Ġ'), as in word-initial tokens
    while (static_cast<int>(v.merges.size()) < mergeCount) {
        const int n = static_cast<int>(v.tokens.size());
        auto pick = [&]() -> int {
            const float r = rng.uniform();
            if (r < 0.45f) return letters[rng.next() % letters.size()];
            if (r < 0.55f || n == 256) return static_cast<int>(rng.next() % 256);
            return 256 + static_cast<int>(rng.next() % static_cast<uint64_t>(n - 256));
        };
        const int a = pick(), b = pick();
        std::string joined = v.tokens[static_cast<size_t>(a)] + v.tokens[static_cast<size_t>(b)];
        if (joined.size() > 24 || !seen.insert(joined).second) continue;
        v.merges.push_back(v.tokens[static_cast<size_t>(a)] + " " + v.tokens[static_cast<size_t>(b)]);
        v.tokens.push_back(std::move(joined));
    }
    v.types.assign(v.tokens.size(), 1);  // normal
    const char* names[specials] = {"<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                                   "<|eot_id|>",        "<|reserved_0|>",  "<|reserved_1|>",      "<|reserved_2|>"};
    for (int i = 0; i < specials && static_cast<int>(v.tokens.size()) < std::max(size, 256 + specials); ++i) {
        v.tokens.push_back(names[i]);
        v.types.push_back(3);  // control
    }
    v.bos = 256 + mergeCount;
    v.eos = v.bos + 1;
    return v;
}

// rows x cols weights of `type`, each row from its own RNG stream.
Result<std::vector<uint8_t>> randomMatrix(GgmlType type, int64_t rows, int64_t cols, float stddev, float mean,
                                          uint64_t seed, int threads) {
    const auto rowBytes = ggmlRowBytes(type, static_cast<uint64_t>(cols));
    if (!rowBytes)
        return Status(ErrorCode::InvalidArgument, "synth: " + std::to_string(cols) + " columns are not whole blocks of " +
                                                      std::string(ggmlTypeName(type)));
    std::vector<uint8_t> out(static_cast<size_t>(*rowBytes * static_cast<uint64_t>(rows)));
    std::atomic<int64_t> next{0};
    std::atomic<bool> failed{false};
    auto work = [&]() {
        std::vector<float> row(static_cast<size_t>(cols));
        for (;;) {
            const int64_t r0 = next.fetch_add(16);
            if (r0 >= rows) return;
            for (int64_t r = r0; r < std::min(rows, r0 + 16); ++r) {
                Rng rng{seed * 0x100000001b3ull + static_cast<uint64_t>(r) * 0x9e3779b97f4a7c15ull};
                for (auto& x : row) x = mean + stddev * rng.normal();
                if (!kernels::quantizeRow(type, row.data(), out.data() + static_cast<size_t>(r) * *rowBytes, cols))
                    failed = true;
            }
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    if (failed) return Status(ErrorCode::Unsupported, "synth: no quantiser for " + std::string(ggmlTypeName(type)));
    return out;
}

}  // namespace

int runSynth(int argc, char** argv) {
    Args args({{"-o", "--output"}, {"--shape"}, {"--type"}, {"--layers"}, {"--seed"}, {"--embd"}, {"--ff"},
               {"--heads"}, {"--kv-heads"}, {"--vocab"}, {"--context"}, {"--rope-base"}, {"--threads"}},
              {{"--tied"}});
    if (!args.parse(argc, argv, 2)) return usageError("synth", args.error());
    const std::string path = args.value("--output", "");
    if (path.empty()) return usageError("synth", "no output file (-o FILE)");

    Shape s{"custom", 0, 0, 0, 0, 0, 0, 4096, 10000.0f, false};
    const std::string shapeName = args.value("--shape", "");
    if (!shapeName.empty()) {
        bool found = false;
        for (const Shape& k : kShapes)
            if (shapeName == k.name) {
                s = k;
                found = true;
            }
        if (!found) return usageError("synth", "unknown shape '" + shapeName + "' (llama3-8b, llama2-7b, llama3-70b, smollm2-135m)");
    }
    auto num = [&](const char* flag, int fallback) { return args.integer(flag, fallback); };
    auto layers = num("--layers", s.layers), embd = num("--embd", s.embd), ff = num("--ff", s.ff),
         heads = num("--heads", s.heads), kvHeads = num("--kv-heads", s.kvHeads), vocab = num("--vocab", s.vocab),
         context = num("--context", s.context), seed = num("--seed", 1),
         threads = num("--threads", static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    auto ropeBase = args.number("--rope-base", s.ropeBase);
    if (!layers || !embd || !ff || !heads || !kvHeads || !vocab || !context || !seed || !threads || !ropeBase)
        return usageError("synth", args.error());
    if (*layers < 1 || *embd < 32 || *ff < 32 || *heads < 1 || *kvHeads < 1 || *vocab < 300 || *context < 16)
        return usageError("synth", "give --shape or all of --layers --embd --ff --heads --vocab (positive; vocab >= 300)");
    if (*embd % *heads != 0 || *heads % *kvHeads != 0 || (*embd / *heads) % 2 != 0)
        return usageError("synth", "--embd must be a multiple of --heads, --heads of --kv-heads, and the head size even");
    GgmlType type = GgmlType::Q4_0;
    const std::string typeName = args.value("--type", "q4_0");
    bool typeFound = false;
    for (const TypeName& t : kTypes)
        if (typeName == t.name) {
            type = t.type;
            typeFound = true;
        }
    if (!typeFound) return usageError("synth", "unknown --type '" + typeName + "' (q4_0, q4_1, q8_0, f16, q4_k, q5_0, q6_k, f32, q5_1, q5_k)");
    const bool tied = s.tied || args.has("--tied");
    const int64_t headDim = *embd / *heads;
    const int nThreads = static_cast<int>(*threads);

    const auto t0 = std::chrono::steady_clock::now();
    gguf::GgufWriter w;
    const std::string arch = "llama";
    w.setString("general.architecture", arch);
    w.setString("general.name", "kestrel-synth-" + (shapeName.empty() ? std::string("custom") : shapeName) + "-" + typeName);
    w.setUInt32("general.quantization_version", 2);
    w.setUInt32("general.file_type", type == GgmlType::Q4_0 ? 2 : type == GgmlType::Q4_1 ? 3 : type == GgmlType::Q8_0 ? 7
                                                             : type == GgmlType::F16 ? 1 : type == GgmlType::Q4_K ? 15 : 0);
    w.setUInt32(arch + ".block_count", static_cast<uint32_t>(*layers));
    w.setUInt32(arch + ".context_length", static_cast<uint32_t>(*context));
    w.setUInt32(arch + ".embedding_length", static_cast<uint32_t>(*embd));
    w.setUInt32(arch + ".feed_forward_length", static_cast<uint32_t>(*ff));
    w.setUInt32(arch + ".attention.head_count", static_cast<uint32_t>(*heads));
    w.setUInt32(arch + ".attention.head_count_kv", static_cast<uint32_t>(*kvHeads));
    w.setUInt32(arch + ".rope.dimension_count", static_cast<uint32_t>(headDim));
    w.setFloat32(arch + ".rope.freq_base", static_cast<float>(*ropeBase));
    w.setFloat32(arch + ".attention.layer_norm_rms_epsilon", 1e-5f);
    w.setUInt32(arch + ".vocab_size", static_cast<uint32_t>(*vocab));

    Vocab v = makeVocab(static_cast<int>(*vocab), static_cast<uint64_t>(*seed));
    w.setString("tokenizer.ggml.model", "gpt2");
    w.setString("tokenizer.ggml.pre", "llama-bpe");
    w.setStringArray("tokenizer.ggml.tokens", v.tokens);
    w.setInt32Array("tokenizer.ggml.token_type", v.types);
    w.setStringArray("tokenizer.ggml.merges", v.merges);
    w.setUInt32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(v.bos));
    w.setUInt32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(v.eos));
    w.setBool("tokenizer.ggml.add_bos_token", true);

    uint64_t tensorSeed = static_cast<uint64_t>(*seed) * 1000003ull;
    uint64_t totalBytes = 0;
    auto add = [&](const std::string& name, GgmlType t, int64_t cols, int64_t rows, float stddev, float mean) -> Status {
        auto data = randomMatrix(t, rows, cols, stddev, mean, ++tensorSeed, nThreads);
        if (!data) return data.status();
        totalBytes += data->size();
        std::vector<uint64_t> dims{static_cast<uint64_t>(cols)};
        if (rows > 1 || t != GgmlType::F32) dims.push_back(static_cast<uint64_t>(rows));
        return w.addTensor(name, t, std::move(dims), *data);
    };
    const int64_t e = *embd, kvDim = *kvHeads * headDim;
    const float se = 1.0f / std::sqrt(static_cast<float>(e)), sf = 1.0f / std::sqrt(static_cast<float>(*ff));
    Status st = add("token_embd.weight", type, e, *vocab, 1.0f, 0.0f);
    if (st.isOk()) st = add("output_norm.weight", GgmlType::F32, e, 1, 0.05f, 1.0f);
    if (st.isOk() && !tied) st = add("output.weight", type, e, *vocab, se, 0.0f);
    for (int il = 0; il < *layers && st.isOk(); ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        st = add(p + "attn_norm.weight", GgmlType::F32, e, 1, 0.05f, 1.0f);
        if (st.isOk()) st = add(p + "attn_q.weight", type, e, e, se, 0.0f);
        if (st.isOk()) st = add(p + "attn_k.weight", type, e, kvDim, se, 0.0f);
        if (st.isOk()) st = add(p + "attn_v.weight", type, e, kvDim, se, 0.0f);
        // Output projections scaled down by depth so the residual stream grows slowly.
        const float depth = 1.0f / std::sqrt(2.0f * static_cast<float>(*layers));
        if (st.isOk()) st = add(p + "attn_output.weight", type, e, e, se * depth * 4.0f, 0.0f);
        if (st.isOk()) st = add(p + "ffn_norm.weight", GgmlType::F32, e, 1, 0.05f, 1.0f);
        if (st.isOk()) st = add(p + "ffn_gate.weight", type, e, *ff, se, 0.0f);
        if (st.isOk()) st = add(p + "ffn_up.weight", type, e, *ff, se, 0.0f);
        if (st.isOk()) st = add(p + "ffn_down.weight", type, *ff, e, sf * depth * 4.0f, 0.0f);
    }
    if (!st.isOk()) return runtimeError(st);
    const auto t1 = std::chrono::steady_clock::now();
    st = w.write(path);
    if (!st.isOk()) return runtimeError(st);
    const auto t2 = std::chrono::steady_clock::now();
    std::fprintf(stderr, "synth: %s: %lld layers, embd %lld, ff %lld, heads %lld/%lld, vocab %lld, %s, %.2f GB "
                         "(generated in %.1f s, written in %.1f s)\n",
                 path.c_str(), *layers, *embd, *ff, *heads, *kvHeads, *vocab, typeName.c_str(), totalBytes / 1e9,
                 std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count());
    return 0;
}

}  // namespace kestrel::cli
