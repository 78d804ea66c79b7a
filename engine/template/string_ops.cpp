#include "template/string_ops.h"

#include "template/utf8_text.h"

#include <algorithm>

namespace kestrel::jinja {

std::vector<std::string> splitString(std::string_view s, std::string_view sep, int64_t maxsplit) {
    std::vector<std::string> out;
    if (sep.empty()) {
        const auto cps = utf8::decode(s);
        size_t i = 0;
        while (true) {
            while (i < cps.size() && utf8::isSpace(cps[i])) ++i;
            if (i >= cps.size()) break;
            if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
                size_t end = cps.size();
                while (end > i && utf8::isSpace(cps[end - 1])) --end;
                out.push_back(utf8::encode(cps, i, end));
                break;
            }
            size_t j = i;
            while (j < cps.size() && !utf8::isSpace(cps[j])) ++j;
            out.push_back(utf8::encode(cps, i, j));
            i = j;
        }
        return out;
    }
    size_t start = 0;
    while (true) {
        if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) break;
        const size_t hit = s.find(sep, start);
        if (hit == std::string_view::npos) break;
        out.emplace_back(s.substr(start, hit - start));
        start = hit + sep.size();
    }
    out.emplace_back(s.substr(start));
    return out;
}

std::vector<std::string> rsplitString(std::string_view s, std::string_view sep, int64_t maxsplit) {
    if (sep.empty() || maxsplit < 0) return splitString(s, sep, maxsplit);
    std::vector<std::string> out;
    size_t end = s.size();
    while (static_cast<int64_t>(out.size()) < maxsplit) {
        if (end < sep.size()) break;
        const size_t hit = s.rfind(sep, end - sep.size());
        if (hit == std::string_view::npos) break;
        out.emplace_back(s.substr(hit + sep.size(), end - hit - sep.size()));
        end = hit;
    }
    out.emplace_back(s.substr(0, end));
    std::reverse(out.begin(), out.end());
    return out;
}

std::string stripString(std::string_view s, const Value& chars, bool left, bool right) {
    const auto cps = utf8::decode(s);
    std::vector<char32_t> set;
    const bool whitespace = !chars.isString();
    if (!whitespace) set = utf8::decode(chars.asString());
    auto strippable = [&](char32_t c) {
        return whitespace ? utf8::isSpace(c) : std::find(set.begin(), set.end(), c) != set.end();
    };
    size_t b = 0, e = cps.size();
    if (left)
        while (b < e && strippable(cps[b])) ++b;
    if (right)
        while (e > b && strippable(cps[e - 1])) --e;
    return utf8::encode(cps, b, e);
}

std::string replaceString(std::string_view s, std::string_view oldS, std::string_view newS, int64_t count,
                          size_t maxBytes) {
    std::string out;
    if (oldS.empty()) {
        // Python inserts `new` before every code point and at the end.
        const auto cps = utf8::decode(s);
        int64_t done = 0;
        for (size_t i = 0; i <= cps.size(); ++i) {
            if (count < 0 || done < count) { out += newS; ++done; }
            if (i < cps.size()) utf8::append(out, cps[i]);
            if (out.size() > maxBytes) break;
        }
        return out;
    }
    size_t start = 0;
    int64_t done = 0;
    while (count < 0 || done < count) {
        const size_t hit = s.find(oldS, start);
        if (hit == std::string_view::npos) break;
        out.append(s.substr(start, hit - start));
        out.append(newS);
        start = hit + oldS.size();
        ++done;
        if (out.size() > maxBytes) return out;
    }
    out.append(s.substr(start));
    return out;
}

std::vector<std::string> splitLines(std::string_view s, bool keepends) {
    std::vector<std::string> out;
    const auto cps = utf8::decode(s);
    size_t start = 0, i = 0;
    while (i < cps.size()) {
        const char32_t c = cps[i];
        const bool brk = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
                         c == 0x85 || c == 0x2028 || c == 0x2029;
        if (!brk) { ++i; continue; }
        size_t end = i + 1;
        if (c == '\r' && end < cps.size() && cps[end] == '\n') ++end;
        out.push_back(utf8::encode(cps, start, keepends ? end : i));
        start = i = end;
    }
    if (start < cps.size()) out.push_back(utf8::encode(cps, start, cps.size()));
    return out;
}

std::string padString(std::string_view s, int64_t width, char32_t fill, char align) {
    const auto n = static_cast<int64_t>(utf8::length(s));
    if (width <= n) return std::string(s);
    const int64_t total = std::min<int64_t>(width - n, 1 << 20);
    int64_t left = 0;
    if (align == 'r') left = total;
    else if (align == 'c') left = total / 2 + (total & width & 1);
    std::string out;
    for (int64_t i = 0; i < left; ++i) utf8::append(out, fill);
    out += s;
    for (int64_t i = left; i < total; ++i) utf8::append(out, fill);
    return out;
}

}  // namespace kestrel::jinja
