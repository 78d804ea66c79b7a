// jinja2's builtin filters, with transformers' `tojson` override.
#include "template/interpreter.h"
#include "template/json_value.h"
#include "template/string_format.h"
#include "template/string_ops.h"
#include "template/utf8_text.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace kestrel::jinja {

namespace {

using FilterFn = Result<Value> (*)(Interpreter&, const Value&, const CallArgs&);

Value arg(const CallArgs& a, size_t i, std::string_view name, Value dflt) {
    const Value* v = a.get(i, name);
    return v ? *v : std::move(dflt);
}

// Filters that take an "attribute" argument follow dotted paths ("function.name").
Result<Value> attributePath(Interpreter& in, const Value& item, const Value& attribute) {
    if (attribute.isInt()) return in.getItem(item, attribute);
    Value cur = item;
    for (const std::string& part : splitString(toPythonStr(attribute), ".", -1)) {
        Value key = Value(part);
        if (!part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
            key = Value(static_cast<int64_t>(std::stoll(part)));
        auto next = in.getItem(cur, key);
        if (!next) return next;
        cur = std::move(*next);
        if (cur.isUndefined()) break;
    }
    return cur;
}

Result<Value> fTrim(Interpreter&, const Value& v, const CallArgs& a) {
    const Value chars = arg(a, 0, "chars", Value::none());
    return Value(stripString(toPythonStr(v), chars, true, true));
}

Result<Value> fLength(Interpreter& in, const Value& v, const CallArgs&) {
    switch (v.kind()) {
        case Value::Kind::Undefined: return Value(0);
        case Value::Kind::String: return Value(static_cast<int64_t>(utf8::length(v.asString())));
        case Value::Kind::List: return Value(static_cast<int64_t>(v.asList().size()));
        case Value::Kind::Dict: return Value(static_cast<int64_t>(v.asDict().size()));
        case Value::Kind::Namespace: return Value(static_cast<int64_t>(v.namespaceAttributes().size()));
        default: return in.error(std::string("object of type '") + v.typeName() + "' has no len()");
    }
}

Result<Value> fToJson(Interpreter& in, const Value& v, const CallArgs& a) {
    JsonDumpOptions o;
    o.ensureAscii = arg(a, 0, "ensure_ascii", Value(false)).truthy();
    const Value indent = arg(a, 1, "indent", Value::none());
    if (indent.isInt()) o.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, indent.asInt())), ' ');
    else if (indent.isString()) o.indent = indent.asString();
    else if (!indent.isNone()) return in.error("tojson: indent must be an integer or a string");
    if (o.indent) o.itemSeparator = ",";
    const Value separators = arg(a, 2, "separators", Value::none());
    if (separators.isList() && separators.asList().size() == 2 && separators.asList()[0].isString() &&
        separators.asList()[1].isString()) {
        o.itemSeparator = separators.asList()[0].asString();
        o.keySeparator = separators.asList()[1].asString();
    } else if (!separators.isNone()) {
        return in.error("tojson: separators must be a pair of strings");
    }
    o.sortKeys = arg(a, 3, "sort_keys", Value(false)).truthy();
    auto s = dumpJson(v, o);
    if (!s) return in.error(s.status().message());
    return Value(std::move(*s));
}

Result<Value> fDefault(Interpreter&, const Value& v, const CallArgs& a) {
    const bool boolean = arg(a, 1, "boolean", Value(false)).truthy();
    if (v.isUndefined() || (boolean && !v.truthy())) return arg(a, 0, "default_value", Value(""));
    return v;
}

Result<Value> fUpper(Interpreter&, const Value& v, const CallArgs&) { return Value(utf8::upper(toPythonStr(v))); }
Result<Value> fLower(Interpreter&, const Value& v, const CallArgs&) { return Value(utf8::lower(toPythonStr(v))); }
Result<Value> fTitle(Interpreter&, const Value& v, const CallArgs&) { return Value(utf8::title(toPythonStr(v))); }
Result<Value> fCapitalize(Interpreter&, const Value& v, const CallArgs&) {
    return Value(utf8::capitalize(toPythonStr(v)));
}

Result<Value> fReplace(Interpreter& in, const Value& v, const CallArgs& a) {
    const Value* oldS = a.get(0, "old");
    const Value* newS = a.get(1, "new");
    if (!oldS || !newS) return in.error("replace needs two arguments (old, new)");
    const Value count = arg(a, 2, "count", Value::none());
    return Value(replaceString(toPythonStr(v), toPythonStr(*oldS), toPythonStr(*newS),
                               count.isNone() ? -1 : count.asInt(), in.limits().maxOutputBytes));
}

Result<Value> fJoin(Interpreter& in, const Value& v, const CallArgs& a) {
    const std::string sep = toPythonStr(arg(a, 0, "d", Value("")));
    const Value attribute = arg(a, 1, "attribute", Value::none());
    auto items = in.iterate(v);
    if (!items) return items.status();
    std::string out;
    for (size_t i = 0; i < items->size(); ++i) {
        if (i) out += sep;
        Value item = (*items)[i];
        if (!attribute.isNone()) {
            auto x = attributePath(in, item, attribute);
            if (!x) return x;
            item = std::move(*x);
        }
        out += toPythonStr(item);
        KESTREL_RETURN_IF_ERROR(in.checkSize(out.size()));
    }
    return Value(std::move(out));
}

Result<Value> fFirst(Interpreter& in, const Value& v, const CallArgs&) {
    auto items = in.iterate(v);
    if (!items) return items.status();
    if (items->empty()) return Value::undefined("no first item, sequence was empty");
    return items->front();
}

Result<Value> fLast(Interpreter& in, const Value& v, const CallArgs&) {
    auto items = in.iterate(v);
    if (!items) return items.status();
    if (items->empty()) return Value::undefined("no last item, sequence was empty");
    return items->back();
}

Result<Value> fList(Interpreter& in, const Value& v, const CallArgs&) {
    auto items = in.iterate(v);
    if (!items) return items.status();
    return Value(std::move(*items));
}

Result<Value> fString(Interpreter&, const Value& v, const CallArgs&) { return Value(toPythonStr(v)); }

Result<Value> fInt(Interpreter&, const Value& v, const CallArgs& a) {
    const Value dflt = arg(a, 0, "default", Value(0));
    if (v.isNumber()) {
        if (v.isFloat() && !std::isfinite(v.asFloat())) return dflt;
        return Value(v.asInt());
    }
    if (v.isString()) {
        const std::string s = stripString(v.asString(), Value::none(), true, true);
        try {
            size_t used = 0;
            const long long i = std::stoll(s, &used, static_cast<int>(arg(a, 1, "base", Value(10)).asInt()));
            if (used == s.size()) return Value(static_cast<int64_t>(i));
        } catch (...) {
        }
        try {
            size_t used = 0;
            const double d = std::stod(s, &used);
            if (used == s.size() && std::isfinite(d)) return Value(static_cast<int64_t>(d));
        } catch (...) {
        }
    }
    return dflt;
}

Result<Value> fFloat(Interpreter&, const Value& v, const CallArgs& a) {
    const Value dflt = arg(a, 0, "default", Value(0.0));
    if (v.isNumber()) return Value(v.asFloat());
    if (v.isString()) {
        const std::string s = stripString(v.asString(), Value::none(), true, true);
        try {
            size_t used = 0;
            const double d = std::stod(s, &used);
            if (used == s.size()) return Value(d);
        } catch (...) {
        }
    }
    return dflt;
}

Result<Value> fAbs(Interpreter& in, const Value& v, const CallArgs&) {
    if (v.isFloat()) return Value(std::fabs(v.asFloat()));
    if (v.isNumber()) return Value(v.asInt() < 0 ? -v.asInt() : v.asInt());
    return in.error(std::string("bad operand type for abs(): '") + v.typeName() + "'");
}

Result<Value> fRound(Interpreter& in, const Value& v, const CallArgs& a) {
    if (!v.isNumber()) return in.error(std::string("round: '") + v.typeName() + "' is not a number");
    const int64_t precision = arg(a, 0, "precision", Value(0)).asInt();
    const std::string method = toPythonStr(arg(a, 1, "method", Value("common")));
    const double scale = std::pow(10.0, static_cast<double>(precision));
    const double x = v.asFloat() * scale;
    double r;
    if (method == "common") r = std::nearbyint(x);  // Python's round(): half to even
    else if (method == "floor") r = std::floor(x);
    else if (method == "ceil") r = std::ceil(x);
    else return in.error("round: method must be 'common', 'ceil' or 'floor'");
    if (method == "common" && !v.isFloat()) return Value(v.asInt());
    return Value(r / scale);
}

Result<Value> fReverse(Interpreter& in, const Value& v, const CallArgs&) {
    if (v.isString()) return pythonSlice(v, 0, 0, -1, false, false);
    auto items = in.iterate(v);
    if (!items) return items.status();
    std::reverse(items->begin(), items->end());
    return Value(std::move(*items));
}

// Sort key for sort/unique/dictsort/min/max: lower-cased strings unless case_sensitive.
Value sortKey(const Value& v, bool caseSensitive) {
    if (!caseSensitive && v.isString()) return Value(utf8::lower(v.asString()));
    return v;
}

Result<Value> sortItems(Interpreter& in, List items, bool reverse, bool caseSensitive, const Value& attribute) {
    std::vector<std::pair<Value, Value>> keyed;
    for (Value& item : items) {
        Value key = item;
        if (!attribute.isNone()) {
            auto k = attributePath(in, item, attribute);
            if (!k) return k;
            key = std::move(*k);
        }
        keyed.emplace_back(sortKey(key, caseSensitive), std::move(item));
    }
    Status failure;
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
        if (!failure.isOk()) return false;
        auto lt = in.applyTest(reverse ? "gt" : "lt", x.first, CallArgs{{y.first}, {}});
        if (!lt) { failure = lt.status(); return false; }
        return *lt;
    });
    KESTREL_RETURN_IF_ERROR(failure);
    List out;
    for (auto& [_, item] : keyed) out.push_back(std::move(item));
    return Value(std::move(out));
}

Result<Value> fSort(Interpreter& in, const Value& v, const CallArgs& a) {
    auto items = in.iterate(v);
    if (!items) return items.status();
    return sortItems(in, std::move(*items), arg(a, 0, "reverse", Value(false)).truthy(),
                     arg(a, 1, "case_sensitive", Value(false)).truthy(), arg(a, 2, "attribute", Value::none()));
}

Result<Value> fUnique(Interpreter& in, const Value& v, const CallArgs& a) {
    auto items = in.iterate(v);
    if (!items) return items.status();
    const bool cs = arg(a, 0, "case_sensitive", Value(false)).truthy();
    const Value attribute = arg(a, 1, "attribute", Value::none());
    List seen, out;
    for (const Value& item : *items) {
        Value key = item;
        if (!attribute.isNone()) {
            auto k = attributePath(in, item, attribute);
            if (!k) return k;
            key = std::move(*k);
        }
        key = sortKey(key, cs);
        bool dup = false;
        for (const Value& s : seen) dup = dup || s.equals(key);
        if (dup) continue;
        seen.push_back(key);
        out.push_back(item);
    }
    return Value(std::move(out));
}

Result<Value> fMap(Interpreter& in, const Value& v, const CallArgs& a) {
    auto items = in.iterate(v);
    if (!items) return items.status();
    List out;
    if (const Value* attribute = a.kwarg("attribute")) {
        const Value* dflt = a.kwarg("default");
        for (const Value& item : *items) {
            auto x = attributePath(in, item, *attribute);
            if (!x) return x;
            out.push_back(x->isUndefined() && dflt ? *dflt : std::move(*x));
        }
        return Value(std::move(out));
    }
    if (a.positional.empty()) return in.error("map needs a filter name or attribute=");
    const std::string filter = toPythonStr(a.positional[0]);
    CallArgs rest{{a.positional.begin() + 1, a.positional.end()}, a.keyword};
    for (const Value& item : *items) {
        KESTREL_RETURN_IF_ERROR(in.step());
        auto x = in.applyFilter(filter, item, rest);
        if (!x) return x;
        out.push_back(std::move(*x));
    }
    return Value(std::move(out));
}

Result<Value> selectImpl(Interpreter& in, const Value& v, const CallArgs& a, bool byAttribute, bool keep) {
    auto items = in.iterate(v);
    if (!items) return items.status();
    size_t next = 0;
    Value attribute;
    if (byAttribute) {
        if (a.positional.empty()) return in.error("selectattr/rejectattr need an attribute name");
        attribute = a.positional[next++];
    }
    std::string test;
    if (next < a.positional.size()) test = toPythonStr(a.positional[next++]);
    CallArgs rest{{a.positional.begin() + static_cast<std::ptrdiff_t>(next), a.positional.end()}, a.keyword};
    List out;
    for (const Value& item : *items) {
        KESTREL_RETURN_IF_ERROR(in.step());
        Value subject = item;
        if (byAttribute) {
            auto x = attributePath(in, item, attribute);
            if (!x) return x;
            subject = std::move(*x);
        }
        bool pass = subject.truthy();
        if (!test.empty()) {
            auto r = in.applyTest(test, subject, rest);
            if (!r) return r.status();
            pass = *r;
        }
        if (pass == keep) out.push_back(item);
    }
    return Value(std::move(out));
}

Result<Value> fSelect(Interpreter& in, const Value& v, const CallArgs& a) { return selectImpl(in, v, a, false, true); }
Result<Value> fReject(Interpreter& in, const Value& v, const CallArgs& a) { return selectImpl(in, v, a, false, false); }
Result<Value> fSelectAttr(Interpreter& in, const Value& v, const CallArgs& a) { return selectImpl(in, v, a, true, true); }
Result<Value> fRejectAttr(Interpreter& in, const Value& v, const CallArgs& a) { return selectImpl(in, v, a, true, false); }

Result<Value> fItems(Interpreter& in, const Value& v, const CallArgs&) {
    if (v.isUndefined()) return Value(List{});
    if (!v.isDict()) return in.error(std::string("items: can only get item pairs from a mapping, not ") + v.typeName());
    List out;
    for (const auto& [k, x] : v.asDict().entries()) out.emplace_back(List{k, x}, true);
    return Value(std::move(out));
}

Result<Value> fDictSort(Interpreter& in, const Value& v, const CallArgs& a) {
    if (!v.isDict()) return in.error("dictsort needs a mapping");
    const bool cs = arg(a, 0, "case_sensitive", Value(false)).truthy();
    const std::string by = toPythonStr(arg(a, 1, "by", Value("key")));
    const bool reverse = arg(a, 2, "reverse", Value(false)).truthy();
    List pairs;
    for (const auto& [k, x] : v.asDict().entries()) pairs.emplace_back(List{k, x}, true);
    return sortItems(in, std::move(pairs), reverse, cs, Value(static_cast<int64_t>(by == "value" ? 1 : 0)));
}

Result<Value> fIndent(Interpreter& in, const Value& v, const CallArgs& a) {
    const Value width = arg(a, 0, "width", Value(4));
    const std::string indention =
        width.isString() ? width.asString() : std::string(static_cast<size_t>(std::max<int64_t>(0, width.asInt())), ' ');
    const bool first = arg(a, 1, "first", Value(false)).truthy();
    const bool blank = arg(a, 2, "blank", Value(false)).truthy();
    const std::vector<std::string> lines = splitLines(toPythonStr(v) + "\n", false);
    std::string rv;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (i) {
            rv += "\n";
            if (blank || !lines[i].empty()) rv += indention;
        }
        rv += lines[i];
        KESTREL_RETURN_IF_ERROR(in.checkSize(rv.size()));
    }
    if (first) rv = indention + rv;
    return Value(std::move(rv));
}

Result<Value> fSafe(Interpreter&, const Value& v, const CallArgs&) { return v; }

Result<Value> fEscape(Interpreter&, const Value& v, const CallArgs&) {
    std::string out;
    for (char c : toPythonStr(v)) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&#34;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return Value(std::move(out));
}

Result<Value> fWordCount(Interpreter&, const Value& v, const CallArgs&) {
    int64_t n = 0;
    bool inWord = false;
    for (char32_t c : utf8::decode(toPythonStr(v))) {
        const bool w = utf8::isAlpha(c) || utf8::isDigit(c) || c == '_' || c >= 0x80;
        if (w && !inWord) ++n;
        inWord = w;
    }
    return Value(n);
}

Result<Value> fBatch(Interpreter& in, const Value& v, const CallArgs& a) {
    const int64_t count = arg(a, 0, "linecount", Value(1)).asInt();
    if (count <= 0) return in.error("batch needs a positive line count");
    const Value* fill = a.get(1, "fill_with");
    auto items = in.iterate(v);
    if (!items) return items.status();
    List out, cur;
    for (const Value& item : *items) {
        cur.push_back(item);
        if (static_cast<int64_t>(cur.size()) == count) { out.emplace_back(std::move(cur)); cur.clear(); }
    }
    if (!cur.empty()) {
        if (fill && !fill->isNone())
            while (static_cast<int64_t>(cur.size()) < count) cur.push_back(*fill);
        out.emplace_back(std::move(cur));
    }
    return Value(std::move(out));
}

Result<Value> fSum(Interpreter& in, const Value& v, const CallArgs& a) {
    auto items = in.iterate(v);
    if (!items) return items.status();
    const Value attribute = arg(a, 0, "attribute", Value::none());
    Value total = arg(a, 1, "start", Value(0));
    for (const Value& item : *items) {
        Value x = item;
        if (!attribute.isNone()) {
            auto r = attributePath(in, item, attribute);
            if (!r) return r;
            x = std::move(*r);
        }
        if (!x.isNumber() || !total.isNumber()) return in.error("sum: items must be numbers");
        total = (x.isFloat() || total.isFloat()) ? Value(total.asFloat() + x.asFloat()) : Value(total.asInt() + x.asInt());
    }
    return total;
}

Result<Value> minMax(Interpreter& in, const Value& v, const CallArgs& a, bool wantMax) {
    auto items = in.iterate(v);
    if (!items) return items.status();
    if (items->empty()) return Value::undefined("no min/max item, sequence was empty");
    auto sorted = sortItems(in, std::move(*items), wantMax, arg(a, 0, "case_sensitive", Value(false)).truthy(),
                            arg(a, 1, "attribute", Value::none()));
    if (!sorted) return sorted;
    return sorted->asList().front();
}

Result<Value> fMin(Interpreter& in, const Value& v, const CallArgs& a) { return minMax(in, v, a, false); }
Result<Value> fMax(Interpreter& in, const Value& v, const CallArgs& a) { return minMax(in, v, a, true); }

Result<Value> fAttr(Interpreter& in, const Value& v, const CallArgs& a) {
    if (a.positional.empty()) return in.error("attr needs a name");
    return in.getAttr(v, toPythonStr(a.positional[0]));
}

Result<Value> fFormat(Interpreter& in, const Value& v, const CallArgs& a) {
    Value args = a.positional.size() == 1 && a.positional[0].isDict() ? a.positional[0] : Value(a.positional, true);
    auto s = percentFormat(toPythonStr(v), args);
    if (!s) return in.error(s.status().message());
    return Value(std::move(*s));
}

Result<Value> fCenter(Interpreter&, const Value& v, const CallArgs& a) {
    return Value(padString(toPythonStr(v), arg(a, 0, "width", Value(80)).asInt(), ' ', 'c'));
}

const std::unordered_map<std::string, FilterFn>& filterTable() {
    static const std::unordered_map<std::string, FilterFn> table = {
        {"trim", fTrim},       {"length", fLength},     {"count", fLength},         {"tojson", fToJson},
        {"default", fDefault}, {"d", fDefault},         {"upper", fUpper},          {"lower", fLower},
        {"title", fTitle},     {"capitalize", fCapitalize}, {"replace", fReplace},  {"join", fJoin},
        {"first", fFirst},     {"last", fLast},         {"list", fList},            {"string", fString},
        {"int", fInt},         {"float", fFloat},       {"abs", fAbs},              {"round", fRound},
        {"reverse", fReverse}, {"sort", fSort},         {"unique", fUnique},        {"map", fMap},
        {"select", fSelect},   {"reject", fReject},     {"selectattr", fSelectAttr}, {"rejectattr", fRejectAttr},
        {"items", fItems},     {"dictsort", fDictSort}, {"indent", fIndent},        {"safe", fSafe},
        {"escape", fEscape},   {"e", fEscape},          {"forceescape", fEscape},   {"wordcount", fWordCount},
        {"batch", fBatch},     {"sum", fSum},           {"min", fMin},              {"max", fMax},
        {"attr", fAttr},       {"center", fCenter},     {"format", fFormat},
    };
    return table;
}

}  // namespace

Result<Value> runFilter(Interpreter& in, const std::string& name, const Value& input, const CallArgs& args,
                        bool& found) {
    const auto& table = filterTable();
    auto it = table.find(name);
    found = it != table.end();
    if (!found) return Value();
    // jinja2 passes undefined to most filters as an empty string; those that
    // would compute with it (int, abs, tojson ...) fail the same way.
    if (input.isCallable() && input.asCallable().kind == Callable::Kind::Unsafe) {
        KESTREL_RETURN_IF_ERROR(in.requireDefined(input));
    }
    if (input.isUndefined() && (name == "tojson" || name == "abs" || name == "round" || name == "dictsort"))
        KESTREL_RETURN_IF_ERROR(in.requireDefined(input));
    return it->second(in, input, args);
}

}  // namespace kestrel::jinja
