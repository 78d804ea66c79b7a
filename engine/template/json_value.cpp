#include "template/json_value.h"

#include "template/utf8_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kestrel::jinja {

namespace {

class JsonParser {
public:
    JsonParser(std::string_view text, int maxDepth) : text_(text), maxDepth_(maxDepth) {}

    Result<Value> parseDocument() {
        skipSpace();
        auto v = parseValue(0);
        if (!v) return v;
        skipSpace();
        if (pos_ != text_.size()) return fail("unexpected text after the JSON value");
        return v;
    }

private:
    Status fail(const std::string& what) const {
        int line = 1, column = 1;
        for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
            if (text_[i] == '\n') { ++line; column = 1; } else { ++column; }
        }
        return Status(ErrorCode::InvalidArgument,
                      "JSON " + std::to_string(line) + ":" + std::to_string(column) + ": " + what);
    }

    void skipSpace() {
        while (pos_ < text_.size() &&
               (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
            ++pos_;
    }

    bool consume(std::string_view word) {
        if (text_.substr(pos_, word.size()) != word) return false;
        pos_ += word.size();
        return true;
    }

    Result<Value> parseValue(int depth) {
        if (depth > maxDepth_) return fail("nested deeper than " + std::to_string(maxDepth_) + " levels");
        if (pos_ >= text_.size()) return fail("unexpected end of input, expected a value");
        const char c = text_[pos_];
        if (c == '{') return parseObject(depth);
        if (c == '[') return parseArray(depth);
        if (c == '"') {
            auto s = parseString();
            if (!s) return s.status();
            return Value(std::move(*s));
        }
        if (consume("true")) return Value(true);
        if (consume("false")) return Value(false);
        if (consume("null")) return Value::none();
        if (c == '-' || (c >= '0' && c <= '9')) return parseNumber();
        return fail(std::string("unexpected character '") + c + "', expected a value");
    }

    Result<Value> parseNumber() {
        const size_t start = pos_;
        if (text_[pos_] == '-') ++pos_;
        auto digits = [&] {
            const size_t d = pos_;
            while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
            return pos_ - d;
        };
        if (digits() == 0) return fail("a number needs digits");
        bool isFloat = false;
        if (pos_ < text_.size() && text_[pos_] == '.') {
            ++pos_;
            isFloat = true;
            if (digits() == 0) return fail("a number needs digits after '.'");
        }
        if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
            ++pos_;
            isFloat = true;
            if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
            if (digits() == 0) return fail("a number needs digits in its exponent");
        }
        const std::string_view num = text_.substr(start, pos_ - start);
        if (!isFloat) {
            int64_t i = 0;
            auto r = std::from_chars(num.data(), num.data() + num.size(), i);
            if (r.ec == std::errc()) return Value(i);
            return fail("integer " + std::string(num) + " does not fit in 64 bits");
        }
        return Value(std::strtod(std::string(num).c_str(), nullptr));
    }

    Result<unsigned> hex4() {
        if (pos_ + 4 > text_.size()) return fail("truncated \\u escape");
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            const char h = text_[pos_++];
            v <<= 4;
            if (h >= '0' && h <= '9') v |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') v |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') v |= static_cast<unsigned>(h - 'A' + 10);
            else return fail("bad hex digit in \\u escape");
        }
        return v;
    }

    Result<std::string> parseString() {
        ++pos_;  // opening quote
        std::string out;
        while (true) {
            if (pos_ >= text_.size()) return fail("unterminated string");
            const char c = text_[pos_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) { --pos_; return fail("control character in a string"); }
            if (c != '\\') { out += c; continue; }
            if (pos_ >= text_.size()) return fail("unterminated escape");
            const char e = text_[pos_++];
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    auto hi = hex4();
                    if (!hi) return hi.status();
                    char32_t cp = *hi;
                    if (cp >= 0xD800 && cp <= 0xDBFF && text_.substr(pos_, 2) == "\\u") {
                        const size_t save = pos_;
                        pos_ += 2;
                        auto lo = hex4();
                        if (!lo) return lo.status();
                        if (*lo >= 0xDC00 && *lo <= 0xDFFF) cp = 0x10000 + ((cp - 0xD800) << 10) + (*lo - 0xDC00);
                        else pos_ = save;
                    }
                    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;  // a lone surrogate has no UTF-8 form
                    utf8::append(out, cp);
                    break;
                }
                default: --pos_; return fail(std::string("unknown escape '\\") + e + "'");
            }
        }
    }

    Result<Value> parseArray(int depth) {
        ++pos_;
        List items;
        skipSpace();
        if (pos_ < text_.size() && text_[pos_] == ']') { ++pos_; return Value(std::move(items)); }
        while (true) {
            skipSpace();
            auto v = parseValue(depth + 1);
            if (!v) return v;
            items.push_back(std::move(*v));
            skipSpace();
            if (pos_ < text_.size() && text_[pos_] == ',') { ++pos_; continue; }
            if (pos_ < text_.size() && text_[pos_] == ']') { ++pos_; return Value(std::move(items)); }
            return fail("expected ',' or ']' in an array");
        }
    }

    Result<Value> parseObject(int depth) {
        ++pos_;
        Dict dict;
        skipSpace();
        if (pos_ < text_.size() && text_[pos_] == '}') { ++pos_; return Value(std::move(dict)); }
        while (true) {
            skipSpace();
            if (pos_ >= text_.size() || text_[pos_] != '"') return fail("expected a string key in an object");
            auto key = parseString();
            if (!key) return key.status();
            skipSpace();
            if (pos_ >= text_.size() || text_[pos_] != ':') return fail("expected ':' after an object key");
            ++pos_;
            skipSpace();
            auto v = parseValue(depth + 1);
            if (!v) return v;
            dict.set(Value(std::move(*key)), std::move(*v));
            skipSpace();
            if (pos_ < text_.size() && text_[pos_] == ',') { ++pos_; continue; }
            if (pos_ < text_.size() && text_[pos_] == '}') { ++pos_; return Value(std::move(dict)); }
            return fail("expected ',' or '}' in an object");
        }
    }

    std::string_view text_;
    int maxDepth_;
    size_t pos_ = 0;
};

void appendJsonString(std::string& out, const std::string& s, bool ensureAscii) {
    out += '"';
    auto escapeCode = [&](unsigned cp) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
        out += buf;
    };
    for (char32_t c : utf8::decode(s)) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20 || (ensureAscii && c >= 0x7F)) {
                    if (c >= 0x10000) {
                        const char32_t v = c - 0x10000;
                        escapeCode(0xD800 + (v >> 10));
                        escapeCode(0xDC00 + (v & 0x3FF));
                    } else {
                        escapeCode(c);
                    }
                } else {
                    utf8::append(out, c);
                }
        }
    }
    out += '"';
}

class JsonWriter {
public:
    explicit JsonWriter(const JsonDumpOptions& o) : o_(o) {}

    Status write(const Value& v, int level) {
        if (level > 512) return Status(ErrorCode::InvalidArgument, "tojson: value nested too deeply");
        switch (v.kind()) {
            case Value::Kind::None: out += "null"; return Status::ok();
            case Value::Kind::Bool: out += v.asBool() ? "true" : "false"; return Status::ok();
            case Value::Kind::Int: out += std::to_string(v.asInt()); return Status::ok();
            case Value::Kind::Float: {
                const double d = v.asFloat();
                if (std::isnan(d)) out += "NaN";
                else if (std::isinf(d)) out += d < 0 ? "-Infinity" : "Infinity";
                else out += formatPythonFloat(d);
                return Status::ok();
            }
            case Value::Kind::String: appendJsonString(out, v.asString(), o_.ensureAscii); return Status::ok();
            case Value::Kind::List: {
                const List& items = v.asList();
                if (items.empty()) { out += "[]"; return Status::ok(); }
                out += '[';
                for (size_t i = 0; i < items.size(); ++i) {
                    if (i) out += o_.itemSeparator;
                    newline(level + 1);
                    KESTREL_RETURN_IF_ERROR(write(items[i], level + 1));
                }
                newline(level);
                out += ']';
                return Status::ok();
            }
            case Value::Kind::Dict: {
                std::vector<const std::pair<Value, Value>*> entries;
                for (const auto& e : v.asDict().entries()) entries.push_back(&e);
                if (entries.empty()) { out += "{}"; return Status::ok(); }
                if (o_.sortKeys) {
                    for (const auto* e : entries)
                        if (!e->first.isString())
                            return Status(ErrorCode::InvalidArgument, "tojson: sort_keys needs string keys");
                    std::stable_sort(entries.begin(), entries.end(), [](const auto* a, const auto* b) {
                        return a->first.asString() < b->first.asString();
                    });
                }
                out += '{';
                bool first = true;
                for (const auto* e : entries) {
                    if (!first) out += o_.itemSeparator;
                    first = false;
                    newline(level + 1);
                    KESTREL_RETURN_IF_ERROR(writeKey(e->first));
                    out += o_.keySeparator;
                    KESTREL_RETURN_IF_ERROR(write(e->second, level + 1));
                }
                newline(level);
                out += '}';
                return Status::ok();
            }
            default:
                return Status(ErrorCode::InvalidArgument,
                              std::string("Object of type ") + v.typeName() + " is not JSON serializable");
        }
    }

    std::string out;

private:
    Status writeKey(const Value& k) {
        switch (k.kind()) {
            case Value::Kind::String: appendJsonString(out, k.asString(), o_.ensureAscii); return Status::ok();
            case Value::Kind::None: out += "\"null\""; return Status::ok();
            case Value::Kind::Bool: out += k.asBool() ? "\"true\"" : "\"false\""; return Status::ok();
            case Value::Kind::Int:
            case Value::Kind::Float: out += '"'; KESTREL_RETURN_IF_ERROR(write(k, 0)); out += '"'; return Status::ok();
            default:
                return Status(ErrorCode::InvalidArgument,
                              std::string("keys must be str, int, float, bool or None, not ") + k.typeName());
        }
    }

    void newline(int level) {
        if (!o_.indent) return;
        out += '\n';
        for (int i = 0; i < level; ++i) out += *o_.indent;
    }

    const JsonDumpOptions& o_;
};

}  // namespace

Result<Value> parseJson(std::string_view text, int maxDepth) { return JsonParser(text, maxDepth).parseDocument(); }

Result<std::string> dumpJson(const Value& v, const JsonDumpOptions& options) {
    JsonWriter w(options);
    KESTREL_RETURN_IF_ERROR(w.write(v, 0));
    return std::move(w.out);
}

}  // namespace kestrel::jinja
