// A small argument parser for kestrel-cli's subcommands.
//
// Options are declared up front, so an unknown flag or a missing value is an
// error with the flag's name rather than a silent default.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kestrel::cli {

class Args {
public:
    // valueFlags take a value ("-m FILE"); boolFlags do not ("--json").
    // Aliases: {"-m", "--model"} means both spellings name one option.
    Args(std::vector<std::vector<std::string>> valueFlags, std::vector<std::vector<std::string>> boolFlags);

    // Parses argv after the subcommand; false with error() set on bad input.
    bool parse(int argc, char** argv, int first);
    const std::string& error() const { return error_; }

    bool has(const std::string& flag) const;
    std::optional<std::string> value(const std::string& flag) const;
    std::string value(const std::string& flag, const std::string& fallback) const;
    // Numeric values; a malformed number is recorded in error() and gives nullopt.
    std::optional<long long> integer(const std::string& flag, long long fallback);
    std::optional<double> number(const std::string& flag, double fallback);
    const std::vector<std::string>& positional() const { return positional_; }

private:
    std::string canonical(const std::string& flag) const;

    std::map<std::string, std::string> alias_;  // spelling -> canonical
    std::map<std::string, bool> takesValue_;     // canonical -> takes a value
    std::map<std::string, std::string> values_;
    std::vector<std::string> positional_;
    std::string error_;
};

}  // namespace kestrel::cli
