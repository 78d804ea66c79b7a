// Python's str operations on UTF-8 strings, shared by filters and methods.
#pragma once

#include "template/value.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kestrel::jinja {

// str.split(sep, maxsplit); an empty sep means None (split on runs of whitespace).
std::vector<std::string> splitString(std::string_view s, std::string_view sep, int64_t maxsplit);
std::vector<std::string> rsplitString(std::string_view s, std::string_view sep, int64_t maxsplit);
// str.strip / lstrip / rstrip; chars none = whitespace, else the set of code points in the string.
std::string stripString(std::string_view s, const Value& chars, bool left, bool right);
// str.replace(old, new, count); stops growing past maxBytes (the caller reports the limit).
std::string replaceString(std::string_view s, std::string_view oldS, std::string_view newS, int64_t count,
                          size_t maxBytes);
// str.splitlines(keepends).
std::vector<std::string> splitLines(std::string_view s, bool keepends);
// str.center / ljust / rjust: align 'c', 'l' or 'r'.
std::string padString(std::string_view s, int64_t width, char32_t fill, char align);

}  // namespace kestrel::jinja
