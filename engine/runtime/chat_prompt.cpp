#include "kestrel/chat.h"

namespace kestrel {

std::vector<TokenId> buildChatPrompt(const Model& model, const std::vector<ChatMessage>& messages,
                                     bool addGenerationPrompt) {
    std::vector<TokenId> out = model.tokenize("", /*addSpecial=*/true, /*parseSpecial=*/false);
    auto append = [&out](const std::vector<TokenId>& ids) { out.insert(out.end(), ids.begin(), ids.end()); };
    for (const auto& m : messages) {
        append(model.tokenize("<|im_start|>" + m.role + "\n", false, true));
        append(model.tokenize(m.content, false, false));
        append(model.tokenize("<|im_end|>\n", false, true));
    }
    if (addGenerationPrompt) append(model.tokenize("<|im_start|>assistant\n", false, true));
    return out;
}

std::vector<std::string> chatStopStrings() { return {"<|im_end|>", "<|im_start|>"}; }

}  // namespace kestrel
