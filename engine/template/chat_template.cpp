#include "template/chat_template.h"

#include "template/json_value.h"
#include "template/lexer.h"
#include "template/parser.h"

namespace kestrel {

struct ChatTemplate::Parsed {
    std::string original;
    jinja::LexedTemplate lexed;
    jinja::Body body;
    TemplateLimits limits;
};

Result<ChatTemplate> ChatTemplate::parse(std::string_view source, const TemplateLimits& limits) {
    auto lexed = jinja::lexTemplate(source);
    if (!lexed) return lexed.status();
    auto p = std::make_shared<Parsed>();
    p->original = std::string(source);
    p->lexed = std::move(*lexed);
    p->limits = limits;
    auto body = jinja::parseTemplate(p->lexed, limits.maxParseDepth);
    if (!body) return Status(ErrorCode::InvalidFile, "chat template: " + body.status().message());
    p->body = std::move(*body);
    ChatTemplate t;
    t.parsed_ = std::move(p);
    return t;
}

const std::string& ChatTemplate::source() const { return parsed_->original; }

Result<std::string> ChatTemplate::render(const TemplateContext& c) const {
    std::vector<std::pair<std::string, jinja::Value>> vars;
    vars.emplace_back("messages", c.messages);
    vars.emplace_back("tools", c.tools);
    vars.emplace_back("documents", c.documents);
    vars.emplace_back("add_generation_prompt", jinja::Value(c.addGenerationPrompt));
    if (c.bosToken) vars.emplace_back("bos_token", jinja::Value(*c.bosToken));
    if (c.eosToken) vars.emplace_back("eos_token", jinja::Value(*c.eosToken));
    if (c.unkToken) vars.emplace_back("unk_token", jinja::Value(*c.unkToken));
    if (c.padToken) vars.emplace_back("pad_token", jinja::Value(*c.padToken));
    for (const auto& kv : c.extra) vars.push_back(kv);
    jinja::Interpreter interpreter(parsed_->lexed, parsed_->limits.render, c.now);
    auto out = interpreter.render(parsed_->body, vars);
    if (!out) return Status(out.status().code(), "chat template: " + out.status().message());
    return out;
}

Result<TemplateContext> TemplateContext::fromJson(std::string_view json) {
    auto v = jinja::parseJson(json);
    if (!v) return v.status();
    if (!v->isDict()) return Status(ErrorCode::InvalidArgument, "conversation JSON: expected an object");
    TemplateContext c;
    bool haveMessages = false;
    for (const auto& [k, x] : v->asDict().entries()) {
        const std::string& key = k.asString();
        auto optionalString = [&](std::optional<std::string>& slot) -> Status {
            if (!x.isString() && !x.isNone())
                return Status(ErrorCode::InvalidArgument, "conversation JSON: '" + key + "' must be a string");
            if (x.isString()) slot = x.asString();
            return Status::ok();
        };
        if (key == "messages") {
            if (!x.isList()) return Status(ErrorCode::InvalidArgument, "conversation JSON: 'messages' must be an array");
            c.messages = x;
            haveMessages = true;
        } else if (key == "tools") {
            c.tools = x;
        } else if (key == "documents") {
            c.documents = x;
        } else if (key == "add_generation_prompt") {
            c.addGenerationPrompt = x.truthy();
        } else if (key == "bos_token") {
            KESTREL_RETURN_IF_ERROR(optionalString(c.bosToken));
        } else if (key == "eos_token") {
            KESTREL_RETURN_IF_ERROR(optionalString(c.eosToken));
        } else if (key == "unk_token") {
            KESTREL_RETURN_IF_ERROR(optionalString(c.unkToken));
        } else if (key == "pad_token") {
            KESTREL_RETURN_IF_ERROR(optionalString(c.padToken));
        } else {
            c.extra.emplace_back(key, x);
        }
    }
    if (!haveMessages) return Status(ErrorCode::InvalidArgument, "conversation JSON: 'messages' is missing");
    return c;
}

const char* chatMlTemplate() {
    return "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
           "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
}

const std::vector<BuiltInTemplate>& builtInTemplates() {
    // Gemma 2 and 3 (tests/data/templates/gemma3.jinja): a system message becomes the
    // first user turn's prefix; the assistant's turns are "model" turns.
    static const char* const kGemma =
        "{%- if messages[0]['role'] == 'system' -%}"
        "{%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}{%- set loop_messages = messages[1:] -%}"
        "{%- else -%}{%- set first_user_prefix = '' -%}{%- set loop_messages = messages -%}{%- endif -%}"
        "{%- for message in loop_messages -%}"
        "{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}"
        "{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else '') }}"
        "{{ message['content'] | trim }}{{ '<end_of_turn>\\n' }}"
        "{%- endfor -%}{%- if add_generation_prompt -%}{{ '<start_of_turn>model\\n' }}{%- endif -%}";
    // Llama 3 (tests/data/templates/llama3.jinja).
    static const char* const kLlama3 =
        "{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + "
        "message['content'] | trim + '<|eot_id|>' }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";
    static const std::vector<BuiltInTemplate> kAll = {
        {"Gemma", kGemma, {"<start_of_turn>", "<end_of_turn>"}, {"<end_of_turn>", "<start_of_turn>"}},
        {"Llama 3", kLlama3, {"<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"},
         {"<|eot_id|>", "<|start_header_id|>"}},
        {"ChatML", chatMlTemplate(), {}, {"<|im_end|>", "<|im_start|>"}},
    };
    return kAll;
}

}  // namespace kestrel
