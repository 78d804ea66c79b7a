// Chat templates: the Jinja template a GGUF carries in `tokenizer.chat_template`,
// rendered byte for byte as Hugging Face transformers renders it.
//
// transformers renders with jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True,
// lstrip_blocks=True, extensions=[loopcontrols, its `{% generation %}` tag]), the globals
// raise_exception(msg) and strftime_now(fmt), and its own `tojson` filter
// (json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)).
// Kestrel implements that subset of jinja2 (see docs in engine/template/interpreter.h);
// the variables are messages, tools (None when absent, as transformers passes it),
// documents, add_generation_prompt, the special tokens, and any extra keyword arguments
// (enable_thinking, date_string ...).
//
// Usage:
//   auto tmpl = ChatTemplate::parse(ggufChatTemplateString);          // syntax errors here
//   auto ctx = TemplateContext::fromJson(R"({"messages": [...], "add_generation_prompt": true})");
//   ctx->bosToken = "<s>";
//   auto prompt = tmpl->render(*ctx);                                 // runtime errors here
//
// Untrusted input: parse and render never crash or hang on a hostile template; limits
// (TemplateLimits) end runaway loops, recursion and output bombs with an error.
//
// Thread-safety: a ChatTemplate is immutable after parse; render may run on many threads.
// A TemplateContext is a plain value.
#pragma once

#include "kestrel/status.h"
#include "template/interpreter.h"
#include "template/value.h"

#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kestrel {

struct TemplateLimits {
    int maxParseDepth = 200;  // nested expressions and blocks
    jinja::RenderLimits render;
};

struct TemplateContext {
    jinja::Value messages = jinja::Value(jinja::List{});  // list of dicts: role, content, tool_calls ...
    jinja::Value tools = jinja::Value::none();             // list of tool schemas, or none
    jinja::Value documents = jinja::Value::none();
    bool addGenerationPrompt = false;
    std::optional<std::string> bosToken, eosToken, unkToken, padToken;  // unset: undefined in the template
    std::vector<std::pair<std::string, jinja::Value>> extra;           // more template variables
    std::optional<std::time_t> now;  // strftime_now's clock; unset: the real time

    // {"messages": [...], "tools": [...], "add_generation_prompt": bool, "bos_token": "...",
    //  "eos_token": "...", any other key -> extra}. Only "messages" is required.
    static Result<TemplateContext> fromJson(std::string_view json);
};

class ChatTemplate {
public:
    static Result<ChatTemplate> parse(std::string_view source, const TemplateLimits& limits = {});
    Result<std::string> render(const TemplateContext& context) const;
    const std::string& source() const;

private:
    struct Parsed;
    std::shared_ptr<const Parsed> parsed_;
};

// The fallback when a model has no template or its template fails: ChatML, the
// format most chat fine-tunes use (<|im_start|>role\ncontent<|im_end|>\n).
const char* chatMlTemplate();

// The built-in formats for a model whose file has no usable template, chosen by
// the turn markers its vocabulary holds as control tokens. Why: a Gemma or Llama 3
// file converted without its template still knows its own turns, and ChatML's
// markers would reach such a model as plain text. Each renders what its family's
// own template renders for plain-text conversations, except that none writes the
// BOS token (the tokenizer adds the model's own): tst_chat_template checks that.
struct BuiltInTemplate {
    const char* name;                   // for the warning: "ChatML", "Gemma", "Llama 3"
    const char* source;                 // Jinja
    std::vector<std::string> markers;   // control tokens the vocabulary must hold; none: fits any model
    std::vector<std::string> stops;     // plain-text spellings that end a turn
};
// Most specific first; the last, ChatML, has no markers.
const std::vector<BuiltInTemplate>& builtInTemplates();

}  // namespace kestrel
