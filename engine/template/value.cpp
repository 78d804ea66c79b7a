#include "template/value.h"

#include "template/callable.h"
#include "template/utf8_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace kestrel::jinja {

const Value* Dict::find(const Value& key) const {
    for (const auto& [k, v] : entries_)
        if (k.equals(key)) return &v;
    return nullptr;
}

const Value* Dict::get(std::string_view key) const {
    for (const auto& [k, v] : entries_)
        if (k.isString() && k.asString() == key) return &v;
    return nullptr;
}

void Dict::set(Value key, Value value) {
    for (auto& [k, v] : entries_) {
        if (k.equals(key)) { v = std::move(value); return; }
    }
    entries_.emplace_back(std::move(key), std::move(value));
}

Value Value::undefined(std::string hint) {
    Value v;
    if (!hint.empty()) v.ptr_ = std::make_shared<const std::string>(std::move(hint));
    return v;
}

Value::Value(std::string s) : kind_(Kind::String), ptr_(std::make_shared<const std::string>(std::move(s))) {}

int64_t Value::asInt() const {
    if (kind_ != Kind::Float) return int_;
    if (!(float_ > -9.2e18 && float_ < 9.2e18)) return float_ > 0 ? INT64_MAX : (float_ < 0 ? INT64_MIN : 0);
    return static_cast<int64_t>(float_);
}

namespace {
uint16_t nestedDepth(int childDepth) { return static_cast<uint16_t>(std::min(childDepth + 1, 65535)); }
}  // namespace

Value::Value(List items, bool tuple)
    : kind_(Kind::List), tuple_(tuple) {
    auto list = std::make_shared<const List>(std::move(items));
    int d = 0;
    for (const Value& v : *list) {
        d = std::max(d, v.depth());
        holdsNamespace_ = holdsNamespace_ || v.holdsNamespace();
    }
    depth_ = nestedDepth(d);
    ptr_ = std::move(list);
}

Value::Value(std::shared_ptr<const Dict> dict) : kind_(Kind::Dict) {
    int d = 0;
    for (const auto& [k, v] : dict->entries()) {
        d = std::max({d, k.depth(), v.depth()});
        holdsNamespace_ = holdsNamespace_ || k.holdsNamespace() || v.holdsNamespace();
    }
    depth_ = nestedDepth(d);
    ptr_ = std::move(dict);
}

Value Value::makeNamespace(std::shared_ptr<Dict> attributes) {
    Value v;
    v.kind_ = Kind::Namespace;
    v.ptr_ = std::move(attributes);
    v.holdsNamespace_ = true;
    v.depth_ = 1;  // attributes change later; they never hold a namespace (see Interpreter::execSet)
    return v;
}

Value Value::makeCallable(std::shared_ptr<const Callable> callable) {
    Value v;
    v.kind_ = Kind::Callable;
    v.ptr_ = std::move(callable);
    return v;
}

Value Value::makeLoop(std::shared_ptr<LoopState> state) {
    Value v;
    v.kind_ = Kind::Loop;
    v.holdsNamespace_ = true;  // its items may hold one; a loop is never stored in a namespace
    v.ptr_ = std::move(state);
    return v;
}

const std::string& Value::undefinedHint() const {
    static const std::string kEmpty;
    return (kind_ == Kind::Undefined && ptr_) ? *static_cast<const std::string*>(ptr_.get()) : kEmpty;
}

bool Value::truthy() const {
    switch (kind_) {
        case Kind::Undefined:
        case Kind::None: return false;
        case Kind::Bool:
        case Kind::Int: return int_ != 0;
        case Kind::Float: return float_ != 0.0;
        case Kind::String: return !asString().empty();
        case Kind::List: return !asList().empty();
        case Kind::Dict: return asDict().size() != 0;
        case Kind::Namespace:
        case Kind::Callable:
        case Kind::Loop: return true;
    }
    return false;
}

bool Value::equals(const Value& o) const {
    if (isNumber() && o.isNumber()) {
        if (kind_ == Kind::Float || o.kind_ == Kind::Float) return asFloat() == o.asFloat();
        return int_ == o.int_;
    }
    if (kind_ != o.kind_) return false;
    switch (kind_) {
        case Kind::Undefined:
        case Kind::None: return true;
        case Kind::String: return asString() == o.asString();
        case Kind::List: {
            const List& a = asList();
            const List& b = o.asList();
            if (tuple_ != o.tuple_ || a.size() != b.size()) return false;
            for (size_t i = 0; i < a.size(); ++i)
                if (!a[i].equals(b[i])) return false;
            return true;
        }
        case Kind::Dict: {
            if (asDict().size() != o.asDict().size()) return false;
            for (const auto& [k, v] : asDict().entries()) {
                const Value* other = o.asDict().find(k);
                if (!other || !other->equals(v)) return false;
            }
            return true;
        }
        case Kind::Namespace:
        case Kind::Callable:
        case Kind::Loop: return ptr_ == o.ptr_;
        default: return false;
    }
}

const char* Value::typeName() const {
    switch (kind_) {
        case Kind::Undefined: return "Undefined";
        case Kind::None: return "NoneType";
        case Kind::Bool: return "bool";
        case Kind::Int: return "int";
        case Kind::Float: return "float";
        case Kind::String: return "str";
        case Kind::List: return tuple_ ? "tuple" : "list";
        case Kind::Dict: return "dict";
        case Kind::Namespace: return "Namespace";
        case Kind::Callable: return "function";
        case Kind::Loop: return "LoopContext";
    }
    return "object";
}

std::string formatPythonFloat(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    // sci = [-]d[.ddd]e[+-]XX
    bool negative = sci[0] == '-';
    if (negative) sci.erase(0, 1);
    const size_t ePos = sci.find('e');
    std::string digits = sci.substr(0, ePos);
    const int exponent = std::stoi(sci.substr(ePos + 1));
    if (digits.size() > 1) digits.erase(1, 1);  // drop the '.'
    const int decpt = exponent + 1;  // value = 0.DIGITS * 10^decpt
    std::string out = negative ? "-" : "";
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            out += "0.";
            out.append(static_cast<size_t>(-decpt), '0');
            out += digits;
        } else if (static_cast<size_t>(decpt) >= digits.size()) {
            out += digits;
            out.append(static_cast<size_t>(decpt) - digits.size(), '0');
            out += ".0";
        } else {
            out += digits.substr(0, static_cast<size_t>(decpt));
            out += '.';
            out += digits.substr(static_cast<size_t>(decpt));
        }
        return out;
    }
    out += digits.substr(0, 1);
    if (digits.size() > 1) {
        out += '.';
        out += digits.substr(1);
    }
    char expBuf[16];
    std::snprintf(expBuf, sizeof expBuf, "e%c%02d", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
    return out + expBuf;
}

namespace {

void appendStringRepr(std::string& out, const std::string& s) {
    const bool hasSingle = s.find('\'') != std::string::npos;
    const bool hasDouble = s.find('"') != std::string::npos;
    const char quote = (hasSingle && !hasDouble) ? '"' : '\'';
    out += quote;
    for (char32_t c : utf8::decode(s)) {
        if (c == static_cast<char32_t>(quote) || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (!utf8::isPrintable(c)) {
            char buf[16];
            if (c < 0x100) std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
            else if (c < 0x10000) std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
            else std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(c));
            out += buf;
        } else {
            utf8::append(out, c);
        }
    }
    out += quote;
}

}  // namespace

void appendPythonRepr(std::string& out, const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Undefined: out += "Undefined"; return;
        case Value::Kind::String: appendStringRepr(out, v.asString()); return;
        case Value::Kind::List: {
            const List& items = v.asList();
            out += v.isTuple() ? '(' : '[';
            for (size_t i = 0; i < items.size(); ++i) {
                if (i) out += ", ";
                appendPythonRepr(out, items[i]);
            }
            if (v.isTuple() && items.size() == 1) out += ',';
            out += v.isTuple() ? ')' : ']';
            return;
        }
        case Value::Kind::Dict: {
            out += '{';
            bool first = true;
            for (const auto& [k, val] : v.asDict().entries()) {
                if (!first) out += ", ";
                first = false;
                appendPythonRepr(out, k);
                out += ": ";
                appendPythonRepr(out, val);
            }
            out += '}';
            return;
        }
        case Value::Kind::Namespace: {
            out += "<Namespace ";
            appendPythonRepr(out, Value(std::make_shared<const Dict>(v.namespaceAttributes())));
            out += '>';
            return;
        }
        default: out += toPythonStr(v); return;
    }
}

std::string toPythonRepr(const Value& v) {
    std::string out;
    appendPythonRepr(out, v);
    return out;
}

std::string toPythonStr(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Undefined: return {};
        case Value::Kind::None: return "None";
        case Value::Kind::Bool: return v.asBool() ? "True" : "False";
        case Value::Kind::Int: return std::to_string(v.asInt());
        case Value::Kind::Float: return formatPythonFloat(v.asFloat());
        case Value::Kind::String: return v.asString();
        case Value::Kind::Callable: return "<function " + v.asCallable().name + ">";
        case Value::Kind::Loop: {
            const LoopState& l = v.asLoop();
            return "<LoopContext " + std::to_string(l.index0 + 1) + "/" + std::to_string(l.items->size()) + ">";
        }
        default: return toPythonRepr(v);
    }
}

}  // namespace kestrel::jinja
