// What Session::generate asks of a source of draft tokens for speculative
// decoding: the conversation looked up (LookupDrafter) or a smaller model
// (ModelDrafter). The caller checks a draft in the same forward step as the
// next token and keeps every drafted token its sampler draws anyway.
#pragma once

#include "kestrel/engine.h"

#include <cstddef>
#include <span>
#include <vector>

namespace kestrel {

class Drafter {
public:
    virtual ~Drafter() = default;
    // The tokens the model holds (the prompt) before the reply's first token.
    virtual void reset(std::span<const TokenId> history) = 0;
    // The next token of the sequence (sampled, or a kept draft token).
    virtual void push(TokenId token) = 0;
    // Up to `max` tokens guessed to follow the tokens pushed so far (none: no guess).
    virtual void draft(int max, std::vector<TokenId>& out) = 0;
    // How the last draft fared: `guessed` tokens checked, the first `kept` drawn.
    virtual void checked(size_t guessed, size_t kept) = 0;
};

}  // namespace kestrel
