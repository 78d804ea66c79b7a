#include "commands.h"

#include <algorithm>
#include <cstdio>

namespace kestrel::cli {

std::vector<std::vector<std::string>> modelFlags() {
    return {{"-m", "--model"}, {"-t", "--threads"}, {"--device"}, {"--kv"}};
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

int usageError(const std::string& command, const std::string& message) {
    std::fprintf(stderr, "kestrel-cli %s: %s (see kestrel-cli --help)\n", command.c_str(), message.c_str());
    return 2;
}

int runtimeError(const Status& status) {
    std::fprintf(stderr, "kestrel-cli: error: %s\n", status.message().c_str());
    return 1;
}

std::shared_ptr<Model> loadModel(Args& args, bool showProgress, const std::function<void(LoadOptions&)>& adjust) {
    LoadOptions options;
    options.path = args.value("--model", "");
    options.device = args.value("--device", "cpu");
    auto threads = args.integer("--threads", 0);
    if (!threads) {
        std::fprintf(stderr, "kestrel-cli: %s\n", args.error().c_str());
        return nullptr;
    }
    options.threads = int32_t(*threads);
    const std::string kv = args.value("--kv", "f16");
    if (kv == "int8") {
        options.kvPrecision = KvPrecision::Int8;
    } else if (kv != "f16") {
        std::fprintf(stderr, "kestrel-cli: --kv takes f16 or int8, not '%s'\n", kv.c_str());
        return nullptr;
    }
    if (options.path.empty()) {
        std::fprintf(stderr, "kestrel-cli: no model given (-m FILE)\n");
        return nullptr;
    }
    if (adjust) adjust(options);
    int lastShown = -1;
    if (showProgress) {
        options.onProgress = [&lastShown](float p) {
            const int percent = int(p * 100.0f);
            if (percent / 10 != lastShown / 10) {
                std::fprintf(stderr, "\rloading %3d%%", percent);
                lastShown = percent;
            }
            return true;
        };
    }
    auto model = Model::load(options);
    if (showProgress) std::fprintf(stderr, "\r             \r");
    if (!model) {
        runtimeError(model.status());
        return nullptr;
    }
    return std::move(model).value();
}

std::vector<std::vector<std::string>> draftFlags() { return {{"--draft"}, {"--draft-n"}}; }

bool openDraft(Args& args, const Model& target, int32_t contextLength, Draft& out) {
    const auto path = args.value("--draft");
    if (!path) return true;
    auto tokens = args.integer("--draft-n", 6);
    if (!tokens || *tokens < 1) {
        std::fprintf(stderr, "kestrel-cli: --draft-n takes a count of at least 1\n");
        return false;
    }
    out.model = loadModel(args, false, [&](LoadOptions& o) {
        o.path = *path;
        o.kvPoolTokens = draftKvPoolTokens(contextLength);
    });
    if (!out.model) return false;
    if (Status ok = draftCompatible(target, *out.model); !ok.isOk()) {
        runtimeError(Status(ok.code(), *path + ": " + ok.message()));
        return false;
    }
    SessionOptions options;
    options.contextLength = contextLength;
    auto session = Session::create(out.model, options);
    if (!session) {
        runtimeError(session.status());
        return false;
    }
    out.session = std::move(session).value();
    out.tokens = int32_t(*tokens);
    return true;
}

}  // namespace kestrel::cli
