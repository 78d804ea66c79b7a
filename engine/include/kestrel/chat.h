// Conversations as token prompts, through the model's own chat template.
//
// A GGUF carries its Jinja chat template in `tokenizer.chat_template`;
// ChatFormatter renders it exactly as Hugging Face transformers does (see
// engine/template/chat_template.h) and tokenizes the result. Message content
// is tokenized with special-token parsing off, so a user who types
// "<|im_end|>" gets those characters, not the control token; only the
// template's own text can produce control tokens.
//
// No template, or one that does not parse: a built-in format, with a warning
// the app shows: Gemma's or Llama 3's turns when the vocabulary holds their
// markers as control tokens (a file converted without its template), else
// ChatML (<|im_start|>role\ncontent<|im_end|>\n). A per-model override
// replaces the file's template.
//
// Thread-safety: a ChatFormatter is immutable after construction.
#pragma once

#include "kestrel/engine.h"

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace kestrel {

struct ChatMessage {
    std::string role;           // "system", "user", "assistant", "tool"
    std::string content;
    std::string reasoning;      // an assistant turn's <think> text, passed as reasoning_content
    std::string toolCallsJson;  // JSON array of tool calls (OpenAI shape), or empty
    std::string toolCallId;     // for role "tool"
    std::string name;           // for role "tool": the function's name
};

struct ChatPromptOptions {
    bool addGenerationPrompt = true;
    std::string toolsJson;  // JSON array of tool schemas, or empty
    // Extra template variables as JSON values, e.g. {"enable_thinking", "false"}.
    std::vector<std::pair<std::string, std::string>> extraJson;
    // The final message is an assistant reply cut short (at its length limit) that the
    // model goes on writing: the prompt ends right after that reply's text, with no
    // end-of-turn after it, as transformers' continue_final_message does (format()
    // renders without a generation prompt and cuts the text there). Last, so that
    // brace-initialised options keep their meaning.
    bool continueFinalMessage = false;
};

struct ChatPrompt {
    std::string text;              // the rendered prompt
    std::vector<TokenId> tokens;
    bool startsInReasoning = false;  // the prompt opens a <think> block the reply continues
};

class ChatFormatter {
public:
    // Parses the template once: `templateOverride` if not empty, else the
    // model's. Never fails: a missing or broken template selects the built-in
    // format that fits the vocabulary (see above) and sets warning().
    explicit ChatFormatter(const Model& model, const std::string& templateOverride = {});
    ~ChatFormatter();
    ChatFormatter(ChatFormatter&&) noexcept;
    ChatFormatter& operator=(ChatFormatter&&) noexcept;

    // Renders and tokenizes. A template that fails at render time (for
    // example raise_exception on a role it does not know) is an error naming
    // the template's message; it is not silently replaced.
    Result<ChatPrompt> format(const std::vector<ChatMessage>& messages, const ChatPromptOptions& options = {}) const;
    // Only the rendered text (kestrel-cli template).
    Result<std::string> render(const std::vector<ChatMessage>& messages, const ChatPromptOptions& options = {}) const;
    // The same from a JSON request: {"messages": [...], "tools": [...], "add_generation_prompt": bool, ...}.
    Result<std::string> renderJson(std::string_view requestJson) const;
    // Tokens of an already rendered prompt (BOS added only if the template did not write it).
    std::vector<TokenId> tokenize(const std::string& renderedText) const;

    bool usesFallback() const;
    const std::string& warning() const;  // empty when the model's template is used
    // Strings that end an assistant turn in this format (besides the model's end-of-generation tokens).
    std::vector<std::string> stopStrings() const;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

// Convenience for simple callers: the model's own template (or the fallback)
// for `messages`; a template that fails to render falls back to the built-in
// format that fits the vocabulary.
std::vector<TokenId> buildChatPrompt(const Model& model, const std::vector<ChatMessage>& messages,
                                     bool addGenerationPrompt);

// How a new prompt relates to the tokens a session already holds: whether it
// extends them (the KV of every earlier turn is reused) or the template
// rewrote history (for example dropping earlier reasoning), in which case
// reuse falls back to the longest common prefix.
struct PromptReuse {
    size_t commonPrefix = 0;
    bool extendsPrevious = true;
};
PromptReuse comparePrompts(std::span<const TokenId> previous, std::span<const TokenId> next);

}  // namespace kestrel
