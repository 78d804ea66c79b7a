// Sampling settings: the knobs a user sees in the settings dialog.
//
// The chain runs in this order on the logits of one step:
//   repetition / frequency / presence penalties (over the last repeatLastN tokens)
//   -> greedy if temperature <= 0
//   -> top-k -> top-p -> min-p (on the untempered distribution, as llama.cpp does)
//   -> temperature -> draw with the seeded generator.
// Same seed, same model, same prompt: the same output, on every run.
#pragma once

#include <cstdint>

namespace kestrel {

struct SamplingParams {
    float temperature = 0.7f;     // <= 0: greedy (argmax)
    int32_t topK = 40;            // <= 0: off
    float topP = 0.95f;           // >= 1: off
    float minP = 0.05f;           // <= 0: off; keep tokens with p >= minP * p_max
    float repeatPenalty = 1.0f;   // 1: off; > 1 discourages tokens seen recently
    int32_t repeatLastN = 64;     // window for the three penalties; 0: off, -1: whole context
    float frequencyPenalty = 0.0f;  // subtracted once per earlier occurrence
    float presencePenalty = 0.0f;   // subtracted once if the token occurred at all
    uint64_t seed = 0;            // 0: a fresh random seed per request
};

}  // namespace kestrel
