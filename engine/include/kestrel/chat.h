// Conversations as token prompts.
//
// Until the Jinja chat-template interpreter lands, every model is prompted in
// ChatML (<|im_start|>role\ncontent<|im_end|>\n), which SmolLM2, Qwen and many
// fine-tunes were trained on. Message content is tokenized with special-token
// parsing off, so a user who types "<|im_end|>" gets those characters, not the
// control token.
#pragma once

#include "kestrel/engine.h"

#include <string>
#include <vector>

namespace kestrel {

struct ChatMessage {
    std::string role;  // "system", "user", "assistant", "tool"
    std::string content;
};

// The prompt for `messages`; with addGenerationPrompt, ends with the opening
// of an assistant turn so the model's reply follows.
std::vector<TokenId> buildChatPrompt(const Model& model, const std::vector<ChatMessage>& messages,
                                     bool addGenerationPrompt);

// Stop strings that end an assistant turn in the fallback format, for models
// whose vocabulary lacks the control token.
std::vector<std::string> chatStopStrings();

}  // namespace kestrel
