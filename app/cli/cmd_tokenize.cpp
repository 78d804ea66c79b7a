// kestrel-cli tokenize: the token ids of TEXT, space separated. Special-token
// text ("<|im_start|>") becomes its control token unless --no-special; BOS
// only where the model's metadata adds one.
#include "commands.h"

#include <cstdio>

namespace kestrel::cli {

int runTokenize(int argc, char** argv) {
    Args args(modelFlags(), {{"--no-special"}, {"--pieces"}});
    if (!args.parse(argc, argv, 2)) return usageError("tokenize", args.error());
    if (args.positional().size() != 1) return usageError("tokenize", "expected exactly one TEXT argument");
    auto model = loadModel(args, false);
    if (!model) return 1;
    const auto ids = model->tokenize(args.positional()[0], /*addSpecial=*/true, !args.has("--no-special"));
    for (size_t i = 0; i < ids.size(); ++i) {
        if (args.has("--pieces"))
            std::printf("%s%d:%s", i ? " " : "", ids[i], model->tokenText(ids[i]).c_str());
        else
            std::printf("%s%d", i ? " " : "", ids[i]);
    }
    std::printf("\n");
    return 0;
}

}  // namespace kestrel::cli
