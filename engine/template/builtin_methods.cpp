// Methods of str, dict and list that the sandbox allows, and the template globals
// (range, namespace, dict, raise_exception, strftime_now).
#include "template/interpreter.h"
#include "template/string_format.h"
#include "template/string_ops.h"
#include "template/utf8_text.h"

#include <ctime>
#include <unordered_map>

namespace kestrel::jinja {

namespace {

Value arg(const CallArgs& a, size_t i, std::string_view name, Value dflt) {
    const Value* v = a.get(i, name);
    return v ? *v : std::move(dflt);
}

Result<std::string> strArg(Interpreter& in, const CallArgs& a, size_t i, std::string_view name, const char* method) {
    const Value* v = a.get(i, name);
    if (!v) return in.error(std::string(method) + "() is missing an argument");
    if (!v->isString()) return in.error(std::string(method) + "() needs a string argument, not " + v->typeName());
    return v->asString();
}

Value toList(const std::vector<std::string>& parts) {
    List out;
    for (const auto& p : parts) out.emplace_back(p);
    return Value(std::move(out));
}

Result<Value> affix(Interpreter& in, const Value& self, const CallArgs& a, bool start) {
    const Value* v = a.get(0, "prefix");
    if (!v) return in.error(start ? "startswith() needs an argument" : "endswith() needs an argument");
    const std::string& s = self.asString();
    auto test = [&](const Value& x) -> Result<bool> {
        if (!x.isString()) return in.error("startswith/endswith need a string or a tuple of strings");
        const std::string& p = x.asString();
        if (p.size() > s.size()) return false;
        return start ? s.compare(0, p.size(), p) == 0 : s.compare(s.size() - p.size(), p.size(), p) == 0;
    };
    if (v->isList()) {
        for (const Value& x : v->asList()) {
            auto r = test(x);
            if (!r) return r.status();
            if (*r) return Value(true);
        }
        return Value(false);
    }
    auto r = test(*v);
    if (!r) return r.status();
    return Value(*r);
}

Result<Value> mStartswith(Interpreter& in, const Value& self, const CallArgs& a) { return affix(in, self, a, true); }
Result<Value> mEndswith(Interpreter& in, const Value& self, const CallArgs& a) { return affix(in, self, a, false); }
Result<Value> mStrip(Interpreter&, const Value& self, const CallArgs& a) {
    return Value(stripString(self.asString(), arg(a, 0, "chars", Value::none()), true, true));
}
Result<Value> mLstrip(Interpreter&, const Value& self, const CallArgs& a) {
    return Value(stripString(self.asString(), arg(a, 0, "chars", Value::none()), true, false));
}
Result<Value> mRstrip(Interpreter&, const Value& self, const CallArgs& a) {
    return Value(stripString(self.asString(), arg(a, 0, "chars", Value::none()), false, true));
}

Result<Value> splitImpl(Interpreter& in, const Value& self, const CallArgs& a, bool fromRight) {
    const Value sep = arg(a, 0, "sep", Value::none());
    const Value maxsplit = arg(a, 1, "maxsplit", Value(-1));
    if (!sep.isNone() && !sep.isString()) return in.error("split() needs a string separator");
    if (sep.isString() && sep.asString().empty()) return in.error("empty separator");
    const std::string s = sep.isString() ? sep.asString() : std::string();
    return toList(fromRight ? rsplitString(self.asString(), s, maxsplit.asInt())
                            : splitString(self.asString(), s, maxsplit.asInt()));
}
Result<Value> mSplit(Interpreter& in, const Value& self, const CallArgs& a) { return splitImpl(in, self, a, false); }
Result<Value> mRsplit(Interpreter& in, const Value& self, const CallArgs& a) { return splitImpl(in, self, a, true); }

Result<Value> mUpper(Interpreter&, const Value& self, const CallArgs&) { return Value(utf8::upper(self.asString())); }
Result<Value> mLower(Interpreter&, const Value& self, const CallArgs&) { return Value(utf8::lower(self.asString())); }
Result<Value> mTitle(Interpreter&, const Value& self, const CallArgs&) { return Value(utf8::title(self.asString())); }
Result<Value> mCapitalize(Interpreter&, const Value& self, const CallArgs&) {
    return Value(utf8::capitalize(self.asString()));
}

Result<Value> mReplace(Interpreter& in, const Value& self, const CallArgs& a) {
    auto o = strArg(in, a, 0, "old", "replace");
    if (!o) return o.status();
    auto n = strArg(in, a, 1, "new", "replace");
    if (!n) return n.status();
    return Value(replaceString(self.asString(), *o, *n, arg(a, 2, "count", Value(-1)).asInt(),
                               in.limits().maxOutputBytes));
}

Result<Value> findImpl(Interpreter& in, const Value& self, const CallArgs& a, bool fromRight, bool count) {
    auto sub = strArg(in, a, 0, "sub", count ? "count" : "find");
    if (!sub) return sub.status();
    const auto cps = utf8::decode(self.asString());
    const auto needle = utf8::decode(*sub);
    const auto n = static_cast<int64_t>(cps.size());
    int64_t start = arg(a, 1, "start", Value(0)).asInt(), end = arg(a, 2, "end", Value(n)).asInt();
    if (start < 0) start = std::max<int64_t>(0, start + n);
    if (end < 0) end = std::max<int64_t>(0, end + n);
    end = std::min(end, n);
    const auto m = static_cast<int64_t>(needle.size());
    int64_t found = -1, hits = 0;
    for (int64_t i = start; i + m <= end; ++i) {
        bool match = true;
        for (int64_t k = 0; k < m && match; ++k) match = cps[static_cast<size_t>(i + k)] == needle[static_cast<size_t>(k)];
        if (!match) continue;
        if (count) { ++hits; if (m > 0) i += m - 1; continue; }
        found = i;
        if (!fromRight) break;
    }
    return Value(count ? hits : found);
}
Result<Value> mFind(Interpreter& in, const Value& self, const CallArgs& a) { return findImpl(in, self, a, false, false); }
Result<Value> mRfind(Interpreter& in, const Value& self, const CallArgs& a) { return findImpl(in, self, a, true, false); }
Result<Value> mCount(Interpreter& in, const Value& self, const CallArgs& a) {
    if (self.isList()) {
        int64_t n = 0;
        const Value* x = a.get(0, "value");
        for (const Value& item : self.asList()) n += (x && item.equals(*x)) ? 1 : 0;
        return Value(n);
    }
    return findImpl(in, self, a, false, true);
}

Result<Value> mSplitlines(Interpreter&, const Value& self, const CallArgs& a) {
    return toList(splitLines(self.asString(), arg(a, 0, "keepends", Value(false)).truthy()));
}

Result<Value> mJoin(Interpreter& in, const Value& self, const CallArgs& a) {
    const Value* v = a.get(0, "iterable");
    if (!v) return in.error("join() needs an iterable");
    auto items = in.iterate(*v);
    if (!items) return items.status();
    std::string out;
    for (size_t i = 0; i < items->size(); ++i) {
        if (!(*items)[i].isString()) return in.error(std::string("join(): expected str instance, ") + (*items)[i].typeName() + " found");
        if (i) out += self.asString();
        out += (*items)[i].asString();
        KESTREL_RETURN_IF_ERROR(in.checkSize(out.size()));
    }
    return Value(std::move(out));
}

template <bool (*Pred)(char32_t)>
Result<Value> mIs(Interpreter&, const Value& self, const CallArgs&) {
    const auto cps = utf8::decode(self.asString());
    if (cps.empty()) return Value(false);
    for (char32_t c : cps)
        if (!Pred(c)) return Value(false);
    return Value(true);
}
bool alnum(char32_t c) { return utf8::isAlpha(c) || utf8::isDigit(c); }

Result<Value> caseTest(const Value& self, bool upper) {
    bool cased = false;
    for (char32_t c : utf8::decode(self.asString())) {
        if (upper ? utf8::isLower(c) : utf8::isUpper(c)) return Value(false);
        cased = cased || utf8::isUpper(c) || utf8::isLower(c);
    }
    return Value(cased);
}
Result<Value> mIsupper(Interpreter&, const Value& self, const CallArgs&) { return caseTest(self, true); }
Result<Value> mIslower(Interpreter&, const Value& self, const CallArgs&) { return caseTest(self, false); }

Result<Value> mRemoveprefix(Interpreter& in, const Value& self, const CallArgs& a) {
    auto p = strArg(in, a, 0, "prefix", "removeprefix");
    if (!p) return p.status();
    const std::string& s = self.asString();
    return Value(s.compare(0, p->size(), *p) == 0 ? s.substr(p->size()) : s);
}
Result<Value> mRemovesuffix(Interpreter& in, const Value& self, const CallArgs& a) {
    auto p = strArg(in, a, 0, "suffix", "removesuffix");
    if (!p) return p.status();
    const std::string& s = self.asString();
    if (!p->empty() && s.size() >= p->size() && s.compare(s.size() - p->size(), p->size(), *p) == 0)
        return Value(s.substr(0, s.size() - p->size()));
    return Value(s);
}

Result<Value> padImpl(Interpreter& in, const Value& self, const CallArgs& a, char align) {
    const Value fill = arg(a, 1, "fillchar", Value(" "));
    const auto f = fill.isString() ? utf8::decode(fill.asString()) : std::vector<char32_t>{};
    if (f.size() != 1) return in.error("the fill character must be exactly one character long");
    const int64_t width = arg(a, 0, "width", Value(0)).asInt();
    KESTREL_RETURN_IF_ERROR(in.checkSize(static_cast<size_t>(std::max<int64_t>(0, width))));
    return Value(padString(self.asString(), width, f[0], align));
}
Result<Value> mCenter(Interpreter& in, const Value& self, const CallArgs& a) { return padImpl(in, self, a, 'c'); }
Result<Value> mLjust(Interpreter& in, const Value& self, const CallArgs& a) { return padImpl(in, self, a, 'l'); }
Result<Value> mRjust(Interpreter& in, const Value& self, const CallArgs& a) { return padImpl(in, self, a, 'r'); }

Result<Value> mFormat(Interpreter& in, const Value& self, const CallArgs& a) {
    auto s = braceFormat(self.asString(), a.positional, a.keyword);
    if (!s) return in.error(s.status().message());
    return Value(std::move(*s));
}

// dict methods
Result<Value> mItems(Interpreter&, const Value& self, const CallArgs&) {
    List out;
    for (const auto& [k, v] : self.asDict().entries()) out.emplace_back(List{k, v}, true);
    return Value(std::move(out));
}
Result<Value> mKeys(Interpreter&, const Value& self, const CallArgs&) {
    List out;
    for (const auto& [k, _] : self.asDict().entries()) out.push_back(k);
    return Value(std::move(out));
}
Result<Value> mValues(Interpreter&, const Value& self, const CallArgs&) {
    List out;
    for (const auto& [_, v] : self.asDict().entries()) out.push_back(v);
    return Value(std::move(out));
}
Result<Value> mGet(Interpreter& in, const Value& self, const CallArgs& a) {
    const Value* key = a.get(0, "key");
    if (!key) return in.error("get() needs a key");
    const Value* v = self.asDict().find(*key);
    if (v) return *v;
    return arg(a, 1, "default", Value::none());
}
Result<Value> mCopy(Interpreter&, const Value& self, const CallArgs&) { return self; }

// list methods
Result<Value> mIndex(Interpreter& in, const Value& self, const CallArgs& a) {
    if (self.isString()) {
        auto r = findImpl(in, self, a, false, false);
        if (r && r->asInt() < 0) return in.error("substring not found");
        return r;
    }
    const Value* x = a.get(0, "value");
    if (!x) return in.error("index() needs a value");
    const List& items = self.asList();
    for (size_t i = 0; i < items.size(); ++i)
        if (items[i].equals(*x)) return Value(static_cast<int64_t>(i));
    return in.error(toPythonRepr(*x) + " is not in list");
}

using MethodTable = std::unordered_map<std::string, BuiltinFn>;

const MethodTable& stringMethods() {
    static const MethodTable t = {
        {"startswith", mStartswith}, {"endswith", mEndswith}, {"strip", mStrip}, {"lstrip", mLstrip},
        {"rstrip", mRstrip}, {"split", mSplit}, {"rsplit", mRsplit}, {"upper", mUpper}, {"lower", mLower},
        {"title", mTitle}, {"capitalize", mCapitalize}, {"replace", mReplace}, {"find", mFind}, {"rfind", mRfind},
        {"count", mCount}, {"index", mIndex}, {"splitlines", mSplitlines}, {"join", mJoin},
        {"isdigit", mIs<utf8::isDigit>}, {"isnumeric", mIs<utf8::isDigit>}, {"isdecimal", mIs<utf8::isDigit>},
        {"isalpha", mIs<utf8::isAlpha>}, {"isalnum", mIs<alnum>}, {"isspace", mIs<utf8::isSpace>},
        {"isupper", mIsupper}, {"islower", mIslower}, {"removeprefix", mRemoveprefix},
        {"removesuffix", mRemovesuffix}, {"center", mCenter}, {"ljust", mLjust}, {"rjust", mRjust}, {"format", mFormat},
    };
    return t;
}

const MethodTable& dictMethods() {
    static const MethodTable t = {
        {"items", mItems}, {"keys", mKeys}, {"values", mValues}, {"get", mGet}, {"copy", mCopy},
    };
    return t;
}

const MethodTable& listMethods() {
    static const MethodTable t = {{"index", mIndex}, {"count", mCount}, {"copy", mCopy}};
    return t;
}

bool isUnsafe(const Value& obj, const std::string& name) {
    static const char* const kList[] = {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"};
    static const char* const kDict[] = {"pop", "popitem", "update", "setdefault", "clear"};
    if (obj.isList())
        for (const char* n : kList)
            if (name == n) return true;
    if (obj.isDict())
        for (const char* n : kDict)
            if (name == n) return true;
    return false;
}

}  // namespace

Value findMethod(const Value& obj, const std::string& name) {
    const MethodTable* table = nullptr;
    if (obj.isString()) table = &stringMethods();
    else if (obj.isDict()) table = &dictMethods();
    else if (obj.isList()) table = &listMethods();
    if (!table) return Value();
    auto c = std::make_shared<Callable>();
    c->name = name;
    c->self = obj;
    if (isUnsafe(obj, name)) {
        c->kind = Callable::Kind::Unsafe;
        c->name = "access to attribute '" + name + "' of '" + obj.typeName() + "' object is unsafe.";
        return Value::makeCallable(std::move(c));
    }
    auto it = table->find(name);
    if (it == table->end()) return Value();
    c->builtin = it->second;
    return Value::makeCallable(std::move(c));
}

namespace {

constexpr int64_t kMaxRange = 100000;  // jinja2.sandbox.MAX_RANGE

Result<Value> gRange(Interpreter& in, const Value&, const CallArgs& a) {
    if (a.positional.empty() || a.positional.size() > 3) return in.error("range() takes 1 to 3 arguments");
    for (const Value& v : a.positional)
        if (!v.isInt() && !v.isBool()) return in.error(std::string("range(): '") + v.typeName() + "' is not an integer");
    int64_t start = 0, stop = 0, step = 1;
    if (a.positional.size() == 1) stop = a.positional[0].asInt();
    else { start = a.positional[0].asInt(); stop = a.positional[1].asInt(); }
    if (a.positional.size() == 3) step = a.positional[2].asInt();
    if (step == 0) return in.error("range() arg 3 must not be zero");
    const long double count = step > 0 ? (static_cast<long double>(stop) - start + step - 1) / step
                                       : (static_cast<long double>(start) - stop - step - 1) / -step;
    if (count > kMaxRange)
        return in.error("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    List out;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.emplace_back(i);
    return Value(std::move(out));
}

Result<Value> gNamespace(Interpreter& in, const Value&, const CallArgs& a) {
    auto attrs = std::make_shared<Dict>();
    for (const Value& p : a.positional) KESTREL_RETURN_IF_ERROR(in.checkNamespaceValue(p));
    for (const auto& [k, v] : a.keyword) KESTREL_RETURN_IF_ERROR(in.checkNamespaceValue(v));
    for (const Value& p : a.positional) {
        if (!p.isDict()) return in.error("namespace() takes a mapping or keyword arguments");
        for (const auto& [k, v] : p.asDict().entries()) attrs->set(k, v);
    }
    for (const auto& [k, v] : a.keyword) attrs->set(Value(k), v);
    return Value::makeNamespace(std::move(attrs));
}

Result<Value> gDict(Interpreter& in, const Value&, const CallArgs& a) {
    Dict d;
    for (const Value& p : a.positional) {
        if (!p.isDict()) return in.error("dict() takes a mapping or keyword arguments");
        for (const auto& [k, v] : p.asDict().entries()) d.set(k, v);
    }
    for (const auto& [k, v] : a.keyword) d.set(Value(k), v);
    return Value(std::move(d));
}

Result<Value> gRaiseException(Interpreter& in, const Value&, const CallArgs& a) {
    const std::string msg = a.positional.empty() ? std::string() : toPythonStr(a.positional[0]);
    return in.error("the chat template raised an error: " + msg);
}

Result<Value> gStrftimeNow(Interpreter& in, const Value&, const CallArgs& a) {
    if (a.positional.empty() || !a.positional[0].isString()) return in.error("strftime_now() needs a format string");
    const std::time_t t = in.now() ? *in.now() : std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[512];
    const std::string& fmt = a.positional[0].asString();
    if (fmt.size() > 100) return in.error("strftime_now(): format string too long");
    const size_t n = std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
    return Value(std::string(buf, n));
}

Value builtin(const char* name, BuiltinFn fn) {
    auto c = std::make_shared<Callable>();
    c->name = name;
    c->builtin = fn;
    return Value::makeCallable(std::move(c));
}

}  // namespace

void installGlobals(std::unordered_map<std::string, Value>& globals) {
    globals["range"] = builtin("range", gRange);
    globals["namespace"] = builtin("namespace", gNamespace);
    globals["dict"] = builtin("dict", gDict);
    globals["raise_exception"] = builtin("raise_exception", gRaiseException);
    globals["strftime_now"] = builtin("strftime_now", gStrftimeNow);
}

}  // namespace kestrel::jinja
