// UTF-8 helpers for the Jinja interpreter: Python's str works on code points,
// templates index, slice, strip and case-map them.
//
// Case mapping covers ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic
// (what chat templates and their conversations meet); other scripts are left
// unchanged, where Python would map the few that have case.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kestrel::jinja::utf8 {

// Decodes; invalid bytes become U+FFFD so a hostile string never fails here.
std::vector<char32_t> decode(std::string_view s);
void append(std::string& out, char32_t c);
std::string encode(const std::vector<char32_t>& cps, size_t begin, size_t end);
size_t length(std::string_view s);  // code points
bool isAscii(std::string_view s);

// Python's str.isspace() for one code point.
bool isSpace(char32_t c);
// Python's str.isprintable() for one code point (repr escapes the others).
bool isPrintable(char32_t c);
bool isAlpha(char32_t c);
bool isDigit(char32_t c);
char32_t toUpper(char32_t c);
char32_t toLower(char32_t c);
bool isUpper(char32_t c);
bool isLower(char32_t c);

std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string title(std::string_view s);       // Python str.title()
std::string capitalize(std::string_view s);  // Python str.capitalize()

}  // namespace kestrel::jinja::utf8
