#include "template/lexer.h"

#include "template/utf8_text.h"

#include <charconv>
#include <cstdlib>

namespace kestrel::jinja {

std::string LexedTemplate::position(uint32_t offset) const {
    int line = 1, column = 1;
    for (size_t i = 0; i < offset && i < source.size(); ++i) {
        if (source[i] == '\n') { ++line; column = 1; } else { ++column; }
    }
    return std::to_string(line) + ":" + std::to_string(column);
}

namespace {

bool isWhite(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool isNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isNameChar(char c) { return isNameStart(c) || (c >= '0' && c <= '9'); }
bool isDigitChar(char c) { return c >= '0' && c <= '9'; }

std::string normaliseNewlines(std::string_view in) {
    std::string out;
    out.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        if (in[i] == '\r') {
            out += '\n';
            if (i + 1 < in.size() && in[i + 1] == '\n') ++i;
        } else {
            out += in[i];
        }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

class Lexer {
public:
    explicit Lexer(LexedTemplate& t) : t_(t), s_(t.source) {}

    Status run() {
        bool lineStarting = true;
        while (pos_ < s_.size()) {
            const size_t tag = findTag(pos_);
            std::string text(s_.substr(pos_, tag - pos_));
            if (tag == s_.size()) {
                emitData(std::move(text), static_cast<uint32_t>(pos_));
                break;
            }
            const char kind = s_[tag + 1];  // '{', '%' or '#'
            const char sign = tag + 2 < s_.size() ? s_[tag + 2] : '\0';
            if (sign == '-') {
                size_t end = text.size();
                while (end > 0 && isWhite(text[end - 1])) --end;
                text.resize(end);
            } else if (sign != '+' && kind != '{') {
                const size_t nl = text.rfind('\n');
                const size_t lpos = nl == std::string::npos ? 0 : nl + 1;
                if (lpos > 0 || lineStarting) {
                    bool allSpace = lpos < text.size();
                    for (size_t i = lpos; i < text.size() && allSpace; ++i)
                        if (!isWhite(text[i])) allSpace = false;
                    if (allSpace) text.resize(lpos);
                }
            }
            emitData(std::move(text), static_cast<uint32_t>(pos_));
            pos_ = tag + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
            if (kind == '#') {
                KESTREL_RETURN_IF_ERROR(lexComment(tag));
            } else if (kind == '%' && isRawBegin()) {
                KESTREL_RETURN_IF_ERROR(lexRaw(tag));
            } else {
                KESTREL_RETURN_IF_ERROR(lexTag(kind == '{', tag));
            }
            lineStarting = pos_ > 0 && s_[pos_ - 1] == '\n';
        }
        t_.tokens.push_back(Token{TokenType::End, {}, 0, 0, static_cast<uint32_t>(s_.size())});
        return Status::ok();
    }

private:
    Status fail(size_t offset, const std::string& what) const {
        return Status(ErrorCode::InvalidArgument, "template " + t_.position(static_cast<uint32_t>(offset)) + ": " + what);
    }

    size_t findTag(size_t from) const {
        for (size_t i = from; i + 1 < s_.size(); ++i)
            if (s_[i] == '{' && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#')) return i;
        return s_.size();
    }

    void emitData(std::string text, uint32_t offset) {
        if (text.empty()) return;
        t_.tokens.push_back(Token{TokenType::Data, std::move(text), 0, 0, offset});
    }

    // After a block end: `-%}` eats all following whitespace, `%}` one newline.
    void afterBlockEnd(bool strip) {
        if (strip) {
            while (pos_ < s_.size() && isWhite(s_[pos_])) ++pos_;
        } else if (pos_ < s_.size() && s_[pos_] == '\n') {
            ++pos_;
        }
    }

    Status lexComment(size_t tagStart) {
        const size_t end = s_.find("#}", pos_);
        if (end == std::string_view::npos) return fail(tagStart, "comment not closed: missing '#}'");
        const bool strip = end > pos_ && s_[end - 1] == '-';
        pos_ = end + 2;
        afterBlockEnd(strip);
        return Status::ok();
    }

    size_t skipWhite(size_t p) const {
        while (p < s_.size() && isWhite(s_[p])) ++p;
        return p;
    }

    bool matchWord(size_t p, std::string_view w) const {
        return s_.substr(p, w.size()) == w && (p + w.size() >= s_.size() || !isNameChar(s_[p + w.size()]));
    }

    bool isRawBegin() const {
        size_t p = skipWhite(pos_);
        if (!matchWord(p, "raw")) return false;
        p = skipWhite(p + 3);
        return s_.substr(p, 2) == "%}" || s_.substr(p, 3) == "-%}";
    }

    Status lexRaw(size_t tagStart) {
        size_t p = skipWhite(skipWhite(pos_) + 3);
        const bool stripAfterBegin = s_[p] == '-';
        pos_ = p + (stripAfterBegin ? 3 : 2);
        if (stripAfterBegin) pos_ = skipWhite(pos_);
        // Find `{%[-+]? endraw [-+]?%}`.
        for (size_t i = pos_; i + 1 < s_.size(); ++i) {
            if (s_[i] != '{' || s_[i + 1] != '%') continue;
            size_t q = i + 2;
            const char sign = q < s_.size() ? s_[q] : '\0';
            if (sign == '-' || sign == '+') ++q;
            q = skipWhite(q);
            if (!matchWord(q, "endraw")) continue;
            q = skipWhite(q + 6);
            bool strip = false;
            if (s_.substr(q, 3) == "-%}") { strip = true; q += 3; }
            else if (s_.substr(q, 3) == "+%}") q += 3;
            else if (s_.substr(q, 2) == "%}") q += 2;
            else continue;
            std::string text(s_.substr(pos_, i - pos_));
            if (sign == '-') {
                size_t end = text.size();
                while (end > 0 && isWhite(text[end - 1])) --end;
                text.resize(end);
            } else if (sign != '+') {
                const size_t nl = text.rfind('\n');
                if (nl != std::string::npos) {
                    bool allSpace = nl + 1 < text.size();
                    for (size_t k = nl + 1; k < text.size() && allSpace; ++k)
                        if (!isWhite(text[k])) allSpace = false;
                    if (allSpace) text.resize(nl + 1);
                }
            }
            emitData(std::move(text), static_cast<uint32_t>(pos_));
            pos_ = q;
            afterBlockEnd(strip);
            return Status::ok();
        }
        return fail(tagStart, "raw block not closed: missing '{% endraw %}'");
    }

    Status lexTag(bool variable, size_t tagStart) {
        t_.tokens.push_back(Token{variable ? TokenType::VariableBegin : TokenType::BlockBegin, {}, 0, 0,
                                  static_cast<uint32_t>(tagStart)});
        int depth = 0;  // brackets: `}}` inside a dict literal does not end the tag
        while (true) {
            pos_ = skipWhite(pos_);
            if (pos_ >= s_.size())
                return fail(tagStart, variable ? "'{{' not closed: missing '}}'" : "'{%' not closed: missing '%}'");
            const std::string_view close = variable ? "}}" : "%}";
            if (depth == 0) {
                const bool minus = s_.substr(pos_, 3) == std::string("-").append(close);
                const bool plus = s_.substr(pos_, 3) == std::string("+").append(close);
                if (minus || plus || s_.substr(pos_, 2) == close) {
                    t_.tokens.push_back(Token{variable ? TokenType::VariableEnd : TokenType::BlockEnd, {}, 0, 0,
                                              static_cast<uint32_t>(pos_)});
                    pos_ += (minus || plus) ? 3 : 2;
                    if (minus) pos_ = skipWhite(pos_);
                    else if (!variable && !plus) afterBlockEnd(false);
                    return Status::ok();
                }
            }
            const size_t start = pos_;
            const char c = s_[pos_];
            if (isNameStart(c)) {
                while (pos_ < s_.size() && isNameChar(s_[pos_])) ++pos_;
                push(TokenType::Name, std::string(s_.substr(start, pos_ - start)), start);
            } else if (isDigitChar(c)) {
                KESTREL_RETURN_IF_ERROR(lexNumber());
            } else if (c == '\'' || c == '"') {
                KESTREL_RETURN_IF_ERROR(lexString());
            } else {
                static const char* const kOps[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%",
                                                   "~",  "<",  ">",  "=",  ".",  ",",  ":", "|", "(", ")", "[",
                                                   "]",  "{",  "}",  ";"};
                bool matched = false;
                for (const char* op : kOps) {
                    const std::string_view o(op);
                    if (s_.substr(pos_, o.size()) != o) continue;
                    if (o == "(" || o == "[" || o == "{") ++depth;
                    if (o == ")" || o == "]" || o == "}") {
                        if (depth == 0) return fail(start, std::string("unexpected '") + op + "'");
                        --depth;
                    }
                    pos_ += o.size();
                    push(TokenType::Operator, std::string(o), start);
                    matched = true;
                    break;
                }
                if (!matched) return fail(start, std::string("unexpected character '") + c + "'");
            }
        }
    }

    void push(TokenType type, std::string text, size_t offset) {
        t_.tokens.push_back(Token{type, std::move(text), 0, 0, static_cast<uint32_t>(offset)});
    }

    Status lexNumber() {
        const size_t start = pos_;
        auto digits = [&] {
            while (pos_ < s_.size() && (isDigitChar(s_[pos_]) || (s_[pos_] == '_' && pos_ + 1 < s_.size() &&
                                                                   isDigitChar(s_[pos_ + 1]))))
                ++pos_;
        };
        digits();
        bool isFloat = false;
        if (pos_ + 1 < s_.size() && s_[pos_] == '.' && isDigitChar(s_[pos_ + 1])) {
            isFloat = true;
            ++pos_;
            digits();
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            size_t q = pos_ + 1;
            if (q < s_.size() && (s_[q] == '+' || s_[q] == '-')) ++q;
            if (q < s_.size() && isDigitChar(s_[q])) {
                isFloat = true;
                pos_ = q;
                digits();
            }
        }
        std::string text;
        for (size_t i = start; i < pos_; ++i)
            if (s_[i] != '_') text += s_[i];
        Token tok{isFloat ? TokenType::Float : TokenType::Integer, text, 0, 0, static_cast<uint32_t>(start)};
        if (isFloat) {
            tok.floatValue = std::strtod(text.c_str(), nullptr);
        } else {
            auto r = std::from_chars(text.data(), text.data() + text.size(), tok.intValue);
            if (r.ec != std::errc()) return fail(start, "integer literal " + text + " does not fit in 64 bits");
        }
        t_.tokens.push_back(std::move(tok));
        return Status::ok();
    }

    // Python's unicode-escape decoding, as jinja2 applies it to string literals.
    Status lexString() {
        const size_t start = pos_;
        const char quote = s_[pos_++];
        std::string out;
        while (true) {
            if (pos_ >= s_.size()) return fail(start, "string literal not closed");
            const char c = s_[pos_++];
            if (c == quote) break;
            if (c != '\\') { out += c; continue; }
            if (pos_ >= s_.size()) return fail(start, "string literal not closed");
            const char e = s_[pos_++];
            auto hexEscape = [&](int n) -> bool {
                if (pos_ + static_cast<size_t>(n) > s_.size()) return false;
                char32_t v = 0;
                for (int i = 0; i < n; ++i) {
                    const char h = s_[pos_ + static_cast<size_t>(i)];
                    v <<= 4;
                    if (h >= '0' && h <= '9') v |= static_cast<char32_t>(h - '0');
                    else if (h >= 'a' && h <= 'f') v |= static_cast<char32_t>(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F') v |= static_cast<char32_t>(h - 'A' + 10);
                    else return false;
                }
                pos_ += static_cast<size_t>(n);
                utf8::append(out, v > 0x10FFFF ? 0xFFFD : v);
                return true;
            };
            switch (e) {
                case '\n': break;
                case '\\': out += '\\'; break;
                case '\'': out += '\''; break;
                case '"': out += '"'; break;
                case 'a': out += '\a'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'v': out += '\v'; break;
                case 'x': if (!hexEscape(2)) return fail(pos_, "bad \\x escape in a string literal"); break;
                case 'u': if (!hexEscape(4)) return fail(pos_, "bad \\u escape in a string literal"); break;
                case 'U': if (!hexEscape(8)) return fail(pos_, "bad \\U escape in a string literal"); break;
                default:
                    if (e >= '0' && e <= '7') {
                        char32_t v = static_cast<char32_t>(e - '0');
                        for (int i = 0; i < 2 && pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '7'; ++i)
                            v = v * 8 + static_cast<char32_t>(s_[pos_++] - '0');
                        utf8::append(out, v);
                    } else {
                        out += '\\';
                        out += e;
                    }
            }
        }
        push(TokenType::String, std::move(out), start);
        return Status::ok();
    }

    LexedTemplate& t_;
    std::string_view s_;
    size_t pos_ = 0;
};

}  // namespace

Result<LexedTemplate> lexTemplate(std::string_view source) {
    LexedTemplate t;
    t.source = normaliseNewlines(source);
    Lexer lexer(t);
    KESTREL_RETURN_IF_ERROR(lexer.run());
    return t;
}

}  // namespace kestrel::jinja
