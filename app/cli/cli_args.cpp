#include "cli_args.h"

#include <cerrno>
#include <cctype>
#include <cstdlib>

namespace kestrel::cli {

Args::Args(std::vector<std::vector<std::string>> valueFlags, std::vector<std::vector<std::string>> boolFlags) {
    auto add = [this](const std::vector<std::string>& names, bool value) {
        for (const auto& n : names) alias_[n] = names.back();
        takesValue_[names.back()] = value;
    };
    for (const auto& f : valueFlags) add(f, true);
    for (const auto& f : boolFlags) add(f, false);
}

std::string Args::canonical(const std::string& flag) const {
    auto it = alias_.find(flag);
    return it == alias_.end() ? std::string() : it->second;
}

bool Args::parse(int argc, char** argv, int first) {
    for (int i = first; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg.size() > 1 && arg[0] == '-' && !(arg.size() > 1 && (std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.'))) {
            std::string inlineValue;
            bool hasInline = false;
            if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
                inlineValue = arg.substr(eq + 1);
                arg = arg.substr(0, eq);
                hasInline = true;
            }
            const std::string name = canonical(arg);
            if (name.empty()) {
                error_ = "unknown option '" + arg + "'";
                return false;
            }
            if (takesValue_[name]) {
                if (hasInline) {
                    values_[name] = inlineValue;
                } else if (i + 1 < argc) {
                    values_[name] = argv[++i];
                } else {
                    error_ = "option '" + arg + "' needs a value";
                    return false;
                }
            } else {
                values_[name] = "1";
            }
        } else {
            positional_.push_back(arg);
        }
    }
    return true;
}

bool Args::has(const std::string& flag) const { return values_.count(canonical(flag)) != 0; }

std::optional<std::string> Args::value(const std::string& flag) const {
    auto it = values_.find(canonical(flag));
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

std::string Args::value(const std::string& flag, const std::string& fallback) const {
    return value(flag).value_or(fallback);
}

std::optional<long long> Args::integer(const std::string& flag, long long fallback) {
    auto v = value(flag);
    if (!v) return fallback;
    errno = 0;
    char* end = nullptr;
    long long n = std::strtoll(v->c_str(), &end, 10);
    if (errno != 0 || end == v->c_str() || *end != '\0') {
        error_ = "option '" + flag + "' expects an integer, got '" + *v + "'";
        return std::nullopt;
    }
    return n;
}

std::optional<double> Args::number(const std::string& flag, double fallback) {
    auto v = value(flag);
    if (!v) return fallback;
    errno = 0;
    char* end = nullptr;
    double n = std::strtod(v->c_str(), &end);
    if (errno != 0 || end == v->c_str() || *end != '\0') {
        error_ = "option '" + flag + "' expects a number, got '" + *v + "'";
        return std::nullopt;
    }
    return n;
}

}  // namespace kestrel::cli
