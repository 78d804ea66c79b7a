#include "pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>

namespace kestrel::tokenizer {
namespace {

// The regexes below are the ones the models' Hugging Face tokenizer.json files
// (or tiktoken encodings) use; `origin` says which.
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
// cl100k_base / Llama 3: case-insensitive contractions, digits in threes.
constexpr std::string_view kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen2: as Llama 3 but every digit on its own.
constexpr std::string_view kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// o200k_base: words split at case changes, contractions attached to the word.
constexpr std::string_view kGpt4o =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// HF Digits(individual_digits = true).
constexpr std::string_view kEachDigit = R"(\p{N})";
// DeepSeek-V3: Split(\p{N}{1,3}), Split(CJK runs), Split(words/punctuation).
constexpr std::string_view kDeepseekV3Cjk = "[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+";
constexpr std::string_view kDeepseekV3Words =
    R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+)"
    R"(| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct Row {
    std::array<std::string_view, 6> names;  // first is canonical; unused slots empty
    std::array<std::string_view, 3> stages;
    bool ignoreMerges;
    std::string_view origin;
};

constexpr Row kRows[] = {
    {{"gpt2", "default", "mpt", "olmo", "gpt-2"}, {kGpt2}, false, "GPT-2 encoder.py / HF ByteLevel"},
    {{"llama-bpe", "llama3", "dbrx", "smaug-bpe"}, {kLlama3}, true, "Meta-Llama-3 tokenizer.json"},
    {{"qwen2", "deepseek-r1-qwen"}, {kQwen2}, false, "Qwen2 tokenizer.json"},
    {{"smollm", "starcoder", "refact"}, {kEachDigit, kGpt2}, false,
     "SmolLM2 / StarCoder tokenizer.json: Digits(individual) + ByteLevel"},
    {{"gpt-4o"}, {kGpt4o}, false, "tiktoken o200k_base"},
    {{"deepseek-v3"}, {R"(\p{N}{1,3})", kDeepseekV3Cjk, kDeepseekV3Words}, false, "DeepSeek-V3 tokenizer.json"},
};

PreTokenizerSpec toSpec(const Row& row) {
    PreTokenizerSpec spec;
    spec.name = std::string(row.names[0]);
    for (auto s : row.stages)
        if (!s.empty()) spec.stages.emplace_back(s);
    spec.ignoreMerges = row.ignoreMerges;
    return spec;
}

const std::vector<std::pair<const Row*, PreTokenizerSpec>>& specs() {
    static const auto all = [] {
        std::vector<std::pair<const Row*, PreTokenizerSpec>> v;
        for (const Row& row : kRows) v.emplace_back(&row, toSpec(row));
        return v;
    }();
    return all;
}

}  // namespace

const PreTokenizerSpec* findPreTokenizerSpec(std::string_view preName) {
    for (const auto& [row, spec] : specs())
        for (auto n : row->names)
            if (!n.empty() && n == preName) return &spec;
    return nullptr;
}

const PreTokenizerSpec& gpt2PreTokenizerSpec() { return specs().front().second; }

std::vector<std::string> knownPreTokenizerNames() {
    std::vector<std::string> names;
    for (const Row& row : kRows)
        for (auto n : row.names)
            if (!n.empty()) names.emplace_back(n);
    return names;
}

struct PreTokenizer::Stage {
    pcre2_code* code = nullptr;
    bool jit = false;
    ~Stage() { pcre2_code_free(code); }
};

namespace {

// Per-call match state: PCRE2 match data and a JIT stack large enough for
// long runs of whitespace (the default 32 KiB machine stack is not).
class MatchState {
public:
    MatchState() : data_(pcre2_match_data_create(1, nullptr)) {}
    ~MatchState() {
        pcre2_match_data_free(data_);
        pcre2_match_context_free(context_);
        pcre2_jit_stack_free(jitStack_);
    }
    pcre2_match_data* data() const { return data_; }
    pcre2_match_context* context(bool jit) {
        if (!jit) return nullptr;
        if (!context_) {
            context_ = pcre2_match_context_create(nullptr);
            jitStack_ = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
            if (context_ && jitStack_) pcre2_jit_stack_assign(context_, nullptr, jitStack_);
        }
        return context_;
    }

private:
    pcre2_match_data* data_;
    pcre2_match_context* context_ = nullptr;
    pcre2_jit_stack* jitStack_ = nullptr;
};

size_t utf8Step(std::string_view text, size_t pos) {
    size_t next = pos + 1;
    while (next < text.size() && (uint8_t(text[next]) & 0xC0) == 0x80) ++next;
    return next;
}

}  // namespace

PreTokenizer::PreTokenizer(PreTokenizerSpec spec) : spec_(std::move(spec)) {}
PreTokenizer::~PreTokenizer() = default;

Result<std::unique_ptr<PreTokenizer>> PreTokenizer::create(const PreTokenizerSpec& spec) {
    std::unique_ptr<PreTokenizer> pre(new PreTokenizer(spec));
    for (const std::string& pattern : spec.stages) {
        int err = 0;
        PCRE2_SIZE errOffset = 0;
        auto stage = std::make_unique<Stage>();
        stage->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                    PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &errOffset,
                                    nullptr);
        if (!stage->code) {
            PCRE2_UCHAR buf[256];
            pcre2_get_error_message(err, buf, sizeof buf);
            return Status(ErrorCode::InvalidArgument,
                          "pre-tokenizer '" + spec.name + "': regex does not compile at offset " +
                              std::to_string(errOffset) + ": " + reinterpret_cast<const char*>(buf));
        }
        // JIT is an optimisation: where it is unavailable the interpreter gives the same splits.
        stage->jit = pcre2_jit_compile(stage->code, PCRE2_JIT_COMPLETE) == 0;
        pre->stages_.push_back(std::move(stage));
    }
    return pre;
}

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& out) const {
    if (text.empty()) return;
    std::vector<std::string_view> current{text};
    std::vector<std::string_view> next;
    MatchState state;
    for (const auto& stage : stages_) {
        next.clear();
        pcre2_match_context* context = state.context(stage->jit);
        for (std::string_view piece : current) {
            const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
            size_t pos = 0, gapStart = 0;
            while (pos < piece.size()) {
                int rc = pcre2_match(stage->code, subject, piece.size(), pos, 0, state.data(), context);
                if (rc == PCRE2_ERROR_JIT_STACKLIMIT)  // pathological input: retry without JIT
                    rc = pcre2_match(stage->code, subject, piece.size(), pos, PCRE2_NO_JIT, state.data(),
                                     nullptr);
                if (rc < 0) break;  // no further match (or a match error): the rest is one gap
                const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(state.data());
                const size_t start = ov[0], end = ov[1];
                if (end <= start) {  // none of the table's regexes match empty; guard anyway
                    pos = utf8Step(piece, std::max(start, pos));
                    continue;
                }
                if (start > gapStart) next.push_back(piece.substr(gapStart, start - gapStart));
                next.push_back(piece.substr(start, end - start));
                pos = gapStart = end;
            }
            if (gapStart < piece.size()) next.push_back(piece.substr(gapStart));
        }
        current.swap(next);
    }
    out.insert(out.end(), current.begin(), current.end());
}

}  // namespace kestrel::tokenizer
