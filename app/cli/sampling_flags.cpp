#include "sampling_flags.h"

namespace kestrel::cli {

std::vector<std::vector<std::string>> samplingFlags() {
    return {{"--temp"}, {"--top-k"}, {"--top-p"}, {"--min-p"}, {"--repeat-penalty"}, {"--repeat-last-n"},
            {"--frequency-penalty"}, {"--presence-penalty"}, {"--seed"}};
}

std::optional<SamplingParams> samplingFromArgs(Args& args, const SamplingParams& d) {
    SamplingParams s;
    auto temp = args.number("--temp", d.temperature);
    auto topK = args.integer("--top-k", d.topK);
    auto topP = args.number("--top-p", d.topP);
    auto minP = args.number("--min-p", d.minP);
    auto repeat = args.number("--repeat-penalty", d.repeatPenalty);
    auto lastN = args.integer("--repeat-last-n", d.repeatLastN);
    auto freq = args.number("--frequency-penalty", d.frequencyPenalty);
    auto presence = args.number("--presence-penalty", d.presencePenalty);
    auto seed = args.integer("--seed", (long long)d.seed);
    if (!temp || !topK || !topP || !minP || !repeat || !lastN || !freq || !presence || !seed) return std::nullopt;
    s.temperature = float(*temp);
    s.topK = int32_t(*topK);
    s.topP = float(*topP);
    s.minP = float(*minP);
    s.repeatPenalty = float(*repeat);
    s.repeatLastN = int32_t(*lastN);
    s.frequencyPenalty = float(*freq);
    s.presencePenalty = float(*presence);
    s.seed = uint64_t(*seed);
    return s;
}

}  // namespace kestrel::cli
