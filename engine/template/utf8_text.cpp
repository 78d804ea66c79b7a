#include "template/utf8_text.h"

namespace kestrel::jinja::utf8 {

std::vector<char32_t> decode(std::string_view s) {
    std::vector<char32_t> out;
    out.reserve(s.size());
    size_t i = 0;
    while (i < s.size()) {
        const auto b = static_cast<unsigned char>(s[i]);
        int extra = 0;
        char32_t cp = 0;
        if (b < 0x80) { out.push_back(b); ++i; continue; }
        if ((b & 0xE0) == 0xC0) { extra = 1; cp = b & 0x1F; }
        else if ((b & 0xF0) == 0xE0) { extra = 2; cp = b & 0x0F; }
        else if ((b & 0xF8) == 0xF0) { extra = 3; cp = b & 0x07; }
        else { out.push_back(0xFFFD); ++i; continue; }
        bool ok = i + static_cast<size_t>(extra) < s.size();
        for (int k = 1; ok && k <= extra; ++k) {
            const auto c = static_cast<unsigned char>(s[i + k]);
            if ((c & 0xC0) != 0x80) ok = false;
            else cp = (cp << 6) | (c & 0x3F);
        }
        if (!ok) { out.push_back(0xFFFD); ++i; continue; }
        out.push_back(cp);
        i += extra + 1;
    }
    return out;
}

void append(std::string& out, char32_t c) {
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
}

std::string encode(const std::vector<char32_t>& cps, size_t begin, size_t end) {
    std::string out;
    for (size_t i = begin; i < end && i < cps.size(); ++i) append(out, cps[i]);
    return out;
}

bool isAscii(std::string_view s) {
    for (char c : s)
        if (static_cast<unsigned char>(c) >= 0x80) return false;
    return true;
}

size_t length(std::string_view s) {
    if (isAscii(s)) return s.size();
    return decode(s).size();
}

bool isSpace(char32_t c) {
    return (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
           c == 0x3000;
}

bool isPrintable(char32_t c) {
    if (c == ' ') return true;
    if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD) return false;
    if (isSpace(c)) return false;  // separators other than space
    if ((c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) || (c >= 0x2060 && c <= 0x206F)) return false;
    if (c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB) || c == 0xFFFE || c == 0xFFFF) return false;
    if ((c >= 0xD800 && c <= 0xF8FF) || c >= 0xF0000) return false;  // surrogates, private use
    if (c == 0x061C || c == 0x180E || (c >= 0xE0000 && c <= 0xE007F)) return false;
    return true;
}

namespace {

struct CaseRange {
    char32_t upperFirst, upperLast;
    int32_t delta;   // lower = upper + delta
    bool alternate;  // pairs U, U+1 (even upper, odd lower)
};

// Blocks with simple one-to-one case pairs.
constexpr CaseRange kRanges[] = {
    {0x41, 0x5A, 32, false},     {0xC0, 0xD6, 32, false},   {0xD8, 0xDE, 32, false},
    {0x100, 0x12F, 1, true},     {0x132, 0x137, 1, true},   {0x139, 0x148, 1, true},
    {0x14A, 0x177, 1, true},     {0x179, 0x17E, 1, true},   {0x391, 0x3A1, 32, false},
    {0x3A3, 0x3AB, 32, false},   {0x410, 0x42F, 32, false}, {0x400, 0x40F, 80, false},
    {0x460, 0x481, 1, true},     {0x48A, 0x4BF, 1, true},   {0x4D0, 0x52F, 1, true},
};

}  // namespace

char32_t toLower(char32_t c) {
    if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
    for (const auto& r : kRanges) {
        if (c < r.upperFirst || c > r.upperLast) continue;
        if (r.alternate) return ((c - r.upperFirst) % 2 == 0) ? c + 1 : c;
        return c + r.delta;
    }
    if (c == 0x386) return 0x3AC;
    if (c >= 0x388 && c <= 0x38A) return c + 37;
    return c;
}

char32_t toUpper(char32_t c) {
    if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
    if (c == 0xFF) return 0x178;
    if (c == 0x3C2) return 0x3A3;  // final sigma
    if (c == 0x3AC) return 0x386;
    if (c >= 0x3AD && c <= 0x3AF) return c - 37;
    for (const auto& r : kRanges) {
        if (r.alternate) {
            if (c > r.upperFirst && c <= r.upperLast + 1 && (c - r.upperFirst) % 2 == 1) return c - 1;
            continue;
        }
        const char32_t lo = r.upperFirst + r.delta, hi = r.upperLast + r.delta;
        if (c >= lo && c <= hi && !(r.upperFirst == 0xC0 && c == 0xF7)) return c - r.delta;
    }
    return c;
}

bool isUpper(char32_t c) { return toLower(c) != c; }
bool isLower(char32_t c) { return toUpper(c) != c || c == 0xDF; }

bool isAlpha(char32_t c) {
    if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (isUpper(c) || isLower(c)) return true;
    // CJK, kana, hangul, and the other letter blocks templates meet.
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3040 && c <= 0x30FF) || (c >= 0xAC00 && c <= 0xD7A3) ||
           (c >= 0x0600 && c <= 0x06FF && c != 0x061C) || (c >= 0x0900 && c <= 0x097F) ||
           (c >= 0x05D0 && c <= 0x05EA);
}

bool isDigit(char32_t c) { return c >= '0' && c <= '9'; }

std::string upper(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : decode(s)) {
        if (c == 0xDF) { out += "SS"; continue; }
        append(out, toUpper(c));
    }
    return out;
}

std::string lower(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : decode(s)) append(out, toLower(c));
    return out;
}

std::string title(std::string_view s) {
    std::string out;
    bool previousCased = false;
    for (char32_t c : decode(s)) {
        const bool cased = isUpper(c) || isLower(c);
        append(out, cased ? (previousCased ? toLower(c) : toUpper(c)) : c);
        previousCased = cased;
    }
    return out;
}

std::string capitalize(std::string_view s) {
    std::string out;
    bool first = true;
    for (char32_t c : decode(s)) {
        append(out, first ? toUpper(c) : toLower(c));
        first = false;
    }
    return out;
}

}  // namespace kestrel::jinja::utf8
