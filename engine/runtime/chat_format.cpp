// ChatFormatter: the model's Jinja chat template (or a built-in fallback that
// fits its vocabulary) rendered and tokenized so that user content cannot
// produce control tokens.
#include "kestrel/chat.h"
#include "model_impl.h"
#include "template/chat_template.h"
#include "template/json_value.h"
#include "template/string_ops.h"

#include <algorithm>

namespace kestrel {
namespace {

using jinja::Value;

std::string specialText(const Model& model, TokenId id) {
    return id >= 0 ? model.tokenText(id) : std::string();
}

// The first built-in format whose turn markers the model holds as control tokens
// (one token when special tokens are parsed, several as plain text); ChatML fits any.
const BuiltInTemplate& builtInFor(const Model& model) {
    const auto isControl = [&](const std::string& text) {
        return model.tokenize(text, false, true).size() == 1 && model.tokenize(text, false, false).size() > 1;
    };
    for (const BuiltInTemplate& t : builtInTemplates())
        if (std::all_of(t.markers.begin(), t.markers.end(), isControl)) return t;
    return builtInTemplates().back();
}

Result<Value> jsonOrNone(const std::string& json, const char* what) {
    if (json.empty()) return Value::none();
    auto v = jinja::parseJson(json);
    if (!v) return Status(ErrorCode::InvalidArgument, std::string(what) + ": " + v.status().message());
    return std::move(v).value();
}

Result<Value> messagesValue(const std::vector<ChatMessage>& messages) {
    jinja::List list;
    for (const auto& m : messages) {
        jinja::Dict d;
        d.set("role", m.role);
        d.set("content", m.content);
        if (!m.reasoning.empty()) d.set("reasoning_content", m.reasoning);
        if (!m.toolCallsJson.empty()) {
            auto calls = jsonOrNone(m.toolCallsJson, "tool_calls");
            if (!calls) return calls.status();
            d.set("tool_calls", std::move(calls).value());
        }
        if (!m.toolCallId.empty()) d.set("tool_call_id", m.toolCallId);
        if (!m.name.empty()) d.set("name", m.name);
        list.push_back(Value(std::move(d)));
    }
    return Value(std::move(list));
}

}  // namespace

struct ChatFormatter::Impl {
    const Model* model = nullptr;
    std::optional<ChatTemplate> tmpl;
    bool fallback = false;
    std::string warning;
    std::vector<std::string> fallbackStops;  // the built-in format's, when fallback

    void fillSpecialTokens(TemplateContext& ctx) const {
        const Tokenizer* tok = model->impl().tokenizer.get();
        if (!tok) return;
        const SpecialTokens& s = tok->special();
        if (s.bos >= 0) ctx.bosToken = specialText(*model, s.bos);
        if (s.eos >= 0) ctx.eosToken = specialText(*model, s.eos);
        if (s.unk >= 0) ctx.unkToken = specialText(*model, s.unk);
        if (s.pad >= 0) ctx.padToken = specialText(*model, s.pad);
    }

    Result<std::string> renderContext(TemplateContext& ctx) const {
        fillSpecialTokens(ctx);
        auto text = tmpl->render(ctx);
        if (!text) return Status(text.status().code(), "chat template: " + text.status().message());
        return text;
    }

    Result<std::string> renderMessages(const std::vector<ChatMessage>& messages, const ChatPromptOptions& o) const {
        TemplateContext ctx;
        auto msgs = messagesValue(messages);
        if (!msgs) return msgs.status();
        ctx.messages = std::move(msgs).value();
        auto tools = jsonOrNone(o.toolsJson, "tools");
        if (!tools) return tools.status();
        ctx.tools = std::move(tools).value();
        ctx.addGenerationPrompt = o.addGenerationPrompt;
        for (const auto& [key, json] : o.extraJson) {
            auto v = jsonOrNone(json, key.c_str());
            if (!v) return v.status();
            ctx.extra.emplace_back(key, std::move(v).value());
        }
        return renderContext(ctx);
    }

    // Content that would tokenize differently with special-token parsing on
    // contains text of a control token: those spans are tokenized as plain
    // text. Everything else is tokenized in one piece, as Hugging Face does,
    // so ordinary prompts give exactly the reference tokens.
    std::vector<TokenId> tokenize(const std::string& text, const std::vector<ChatMessage>& messages) const {
        std::vector<std::string_view> guarded;
        for (const auto& m : messages)
            for (const std::string* s : {&m.content, &m.reasoning})
                if (!s->empty() && model->tokenize(*s, false, true) != model->tokenize(*s, false, false))
                    guarded.push_back(*s);

        const Tokenizer* tok = model->impl().tokenizer.get();
        const std::string bos = tok && tok->special().bos >= 0 ? specialText(*model, tok->special().bos) : "";
        // A template that writes the BOS text itself must not get a second BOS.
        const bool templateHasBos = !bos.empty() && text.rfind(bos, 0) == 0;
        std::vector<TokenId> out = templateHasBos ? std::vector<TokenId>() : model->tokenize("", true, false);
        auto append = [&out](std::vector<TokenId> ids) { out.insert(out.end(), ids.begin(), ids.end()); };

        size_t cursor = 0;
        for (std::string_view g : guarded) {
            const size_t at = text.find(g, cursor);
            if (at == std::string::npos) continue;  // the template changed it; it stays template text
            append(model->tokenize(std::string_view(text).substr(cursor, at - cursor), false, true));
            append(model->tokenize(g, false, false));
            cursor = at + g.size();
        }
        append(model->tokenize(std::string_view(text).substr(cursor), false, true));
        return out;
    }
};

ChatFormatter::ChatFormatter(const Model& model, const std::string& templateOverride) : impl_(std::make_unique<Impl>()) {
    impl_->model = &model;
    const std::string& source = templateOverride.empty() ? model.info().chatTemplate : templateOverride;
    const char* origin = templateOverride.empty() ? "the model's chat template" : "the chat-template override";
    if (!source.empty()) {
        auto parsed = ChatTemplate::parse(source);
        if (parsed) {
            impl_->tmpl = std::move(parsed).value();
            return;
        }
        impl_->warning = std::string(origin) + " does not parse (" + parsed.status().message() + ")";
    } else {
        impl_->warning = "the model has no chat template";
    }
    const BuiltInTemplate& builtIn = builtInFor(model);
    impl_->warning += builtIn.markers.empty()
                          ? std::string("; using the ChatML fallback")
                          : "; using the built-in " + std::string(builtIn.name) + " format, whose turn markers its vocabulary holds";
    impl_->fallback = true;
    impl_->fallbackStops = builtIn.stops;
    impl_->tmpl = std::move(ChatTemplate::parse(builtIn.source)).value();
}

ChatFormatter::~ChatFormatter() = default;
ChatFormatter::ChatFormatter(ChatFormatter&&) noexcept = default;
ChatFormatter& ChatFormatter::operator=(ChatFormatter&&) noexcept = default;

bool ChatFormatter::usesFallback() const { return impl_->fallback; }
const std::string& ChatFormatter::warning() const { return impl_->warning; }

std::vector<std::string> ChatFormatter::stopStrings() const {
    // Control tokens render as no text, so only plain-text spellings matter:
    // a fallback-prompted model may write the format's markers as ordinary text.
    if (impl_->fallback) return impl_->fallbackStops;
    return {};
}

Result<std::string> ChatFormatter::render(const std::vector<ChatMessage>& messages, const ChatPromptOptions& o) const {
    return impl_->renderMessages(messages, o);
}

Result<std::string> ChatFormatter::renderJson(std::string_view requestJson) const {
    auto ctx = TemplateContext::fromJson(requestJson);
    if (!ctx) return ctx.status();
    return impl_->renderContext(*ctx);
}

std::vector<TokenId> ChatFormatter::tokenize(const std::string& renderedText) const {
    return impl_->tokenize(renderedText, {});
}

namespace {

// Where the final message's text ends in `rendered`: templates often trim what
// they show (Llama 3's `| trim`), so the text as that filter trims it is looked for too.
size_t finalMessageEnd(const std::string& rendered, const std::string& content) {
    if (const size_t at = rendered.rfind(content); at != std::string::npos) return at + content.size();
    const std::string trimmed = jinja::stripString(content, jinja::Value::none(), true, true);
    if (trimmed.empty()) return std::string::npos;
    const size_t at = rendered.rfind(trimmed);
    return at == std::string::npos ? at : at + trimmed.size();
}

}  // namespace

Result<ChatPrompt> ChatFormatter::format(const std::vector<ChatMessage>& messages, const ChatPromptOptions& o) const {
    ChatPromptOptions options = o;
    if (o.continueFinalMessage) {
        if (messages.empty() || messages.back().role != "assistant" || messages.back().content.empty())
            return Status(ErrorCode::InvalidArgument, "only an assistant reply with text can be continued");
        options.addGenerationPrompt = false;
    }
    auto text = render(messages, options);
    if (!text) return text.status();
    ChatPrompt prompt;
    prompt.text = std::move(text).value();
    if (o.continueFinalMessage) {
        const size_t end = finalMessageEnd(prompt.text, messages.back().content);
        if (end == std::string::npos)
            return Status(ErrorCode::Unsupported,
                          "this chat template does not show the reply's text back to the model, so it cannot be continued");
        prompt.text.resize(end);
    }
    prompt.tokens = impl_->tokenize(prompt.text, messages);
    const size_t open = prompt.text.rfind("<think>");
    const size_t close = prompt.text.rfind("</think>");
    prompt.startsInReasoning = open != std::string::npos && (close == std::string::npos || close < open);
    return prompt;
}

std::vector<TokenId> buildChatPrompt(const Model& model, const std::vector<ChatMessage>& messages,
                                     bool addGenerationPrompt) {
    ChatPromptOptions options;
    options.addGenerationPrompt = addGenerationPrompt;
    auto prompt = ChatFormatter(model).format(messages, options);
    if (!prompt) prompt = ChatFormatter(model, builtInFor(model).source).format(messages, options);
    return prompt ? std::move(prompt->tokens) : std::vector<TokenId>();
}

PromptReuse comparePrompts(std::span<const TokenId> previous, std::span<const TokenId> next) {
    PromptReuse r;
    const size_t n = std::min(previous.size(), next.size());
    while (r.commonPrefix < n && previous[r.commonPrefix] == next[r.commonPrefix]) ++r.commonPrefix;
    r.extendsPrevious = r.commonPrefix == previous.size();
    return r;
}

}  // namespace kestrel
