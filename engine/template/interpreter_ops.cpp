// Python's operators, indexing, slicing and iteration over Values.
#include "template/interpreter.h"

#include "template/string_format.h"
#include "template/utf8_text.h"

#include <cmath>
#include <limits>

namespace kestrel::jinja {

namespace {

std::string unsupported(const char* op, const Value& a, const Value& b) {
    return std::string("unsupported operand type(s) for ") + op + ": '" + a.typeName() + "' and '" + b.typeName() + "'";
}

double floorMod(double a, double b) {
    double m = std::fmod(a, b);
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
}

}  // namespace

Result<List> Interpreter::iterate(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Undefined: return List{};
        case Value::Kind::List: return v.asList();
        case Value::Kind::Dict: {
            List keys;
            for (const auto& [k, _] : v.asDict().entries()) keys.push_back(k);
            return keys;
        }
        case Value::Kind::String: {
            List chars;
            const auto cps = utf8::decode(v.asString());
            for (char32_t c : cps) {
                std::string s;
                utf8::append(s, c);
                chars.emplace_back(std::move(s));
            }
            return chars;
        }
        default: return error(std::string("'") + v.typeName() + "' object is not iterable");
    }
}

Result<Value> Interpreter::loopAttr(const Value& obj, const std::string& name) {
    const LoopState& l = obj.asLoop();
    const List& items = *l.items;
    const auto n = static_cast<int64_t>(items.size());
    const int64_t i = l.index0;
    if (name == "index") return Value(i + 1);
    if (name == "index0") return Value(i);
    if (name == "revindex") return Value(n - i);
    if (name == "revindex0") return Value(n - i - 1);
    if (name == "first") return Value(i == 0);
    if (name == "last") return Value(i == n - 1);
    if (name == "length") return Value(n);
    if (name == "depth") return Value(1);
    if (name == "depth0") return Value(0);
    if (name == "previtem")
        return i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item");
    if (name == "nextitem")
        return i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item");
    if (name == "cycle") {
        auto cycle = std::make_shared<Callable>();
        cycle->name = "loop.cycle";
        cycle->self = Value(i);
        cycle->builtin = [](Interpreter& in, const Value& self, const CallArgs& args) -> Result<Value> {
            if (args.positional.empty()) return in.error("loop.cycle() needs at least one value");
            return args.positional[static_cast<size_t>(self.asInt()) % args.positional.size()];
        };
        return Value::makeCallable(std::move(cycle));
    }
    return Value::undefined("'LoopContext' object has no attribute '" + name + "'");
}

Result<Value> Interpreter::getAttr(const Value& obj, const std::string& name) {
    if (obj.isUndefined()) return error(undefinedMessageFor(obj, name));
    if (obj.isLoop()) return loopAttr(obj, name);
    if (obj.isNamespace()) {
        const Value* v = obj.namespaceAttributes().get(name);
        if (v) return *v;
        return Value::undefined("'Namespace' object has no attribute '" + name + "'");
    }
    Value method = findMethod(obj, name);
    if (!method.isUndefined()) return method;
    if (obj.isDict()) {
        const Value* v = obj.asDict().get(name);
        if (v) return *v;
        return Value::undefined("'dict object' has no attribute '" + name + "'");
    }
    return Value::undefined(std::string("'") + obj.typeName() + " object' has no attribute '" + name + "'");
}

std::string Interpreter::undefinedMessageFor(const Value& obj, const std::string& what) {
    const std::string& hint = obj.undefinedHint();
    return (hint.empty() ? std::string("a value is undefined") : hint) + " (while looking up '" + what + "')";
}

Result<Value> Interpreter::getItem(const Value& obj, const Value& key) {
    if (obj.isUndefined()) return error(undefinedMessageFor(obj, toPythonStr(key)));
    if (obj.isDict()) {
        const Value* v = obj.asDict().find(key);
        if (v) return *v;
        if (key.isString()) {
            Value method = findMethod(obj, key.asString());
            if (!method.isUndefined()) return method;
        }
        return Value::undefined("'dict object' has no attribute " + toPythonRepr(key));
    }
    if ((obj.isList() || obj.isString()) && (key.isInt() || key.isBool())) {
        if (obj.isList()) {
            const List& items = obj.asList();
            int64_t i = key.asInt();
            const auto n = static_cast<int64_t>(items.size());
            if (i < 0) i += n;
            if (i < 0 || i >= n) return Value::undefined(std::string(obj.typeName()) + " index out of range");
            return items[static_cast<size_t>(i)];
        }
        const auto cps = utf8::decode(obj.asString());
        int64_t i = key.asInt();
        const auto n = static_cast<int64_t>(cps.size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) return Value::undefined("string index out of range");
        return Value(utf8::encode(cps, static_cast<size_t>(i), static_cast<size_t>(i) + 1));
    }
    if (key.isString()) return getAttr(obj, key.asString());
    return Value::undefined(std::string("'") + obj.typeName() + " object' has no item " + toPythonRepr(key));
}

Value pythonSlice(const Value& obj, int64_t start, int64_t stop, int64_t step, bool hasStart, bool hasStop) {
    std::vector<char32_t> cps;
    int64_t n = 0;
    if (obj.isString()) {
        cps = utf8::decode(obj.asString());
        n = static_cast<int64_t>(cps.size());
    } else {
        n = static_cast<int64_t>(obj.asList().size());
    }
    const int64_t lower = step > 0 ? 0 : -1, upper = step > 0 ? n : n - 1;
    auto adjust = [&](int64_t v, bool has, int64_t dflt) {
        if (!has) return dflt;
        if (v < 0) v += n;
        return v < lower ? lower : (v > upper ? upper : v);
    };
    start = adjust(start, hasStart, step > 0 ? 0 : n - 1);
    stop = adjust(stop, hasStop, step > 0 ? n : -1);
    if (obj.isString()) {
        std::string out;
        for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) utf8::append(out, cps[static_cast<size_t>(i)]);
        return Value(std::move(out));
    }
    List out;
    const List& items = obj.asList();
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(items[static_cast<size_t>(i)]);
    return Value(std::move(out), obj.isTuple());
}

Result<Value> Interpreter::evalSlice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
    KESTREL_RETURN_IF_ERROR(requireDefined(obj));
    if (!obj.isString() && !obj.isList()) return error(std::string("'") + obj.typeName() + "' object is not subscriptable");
    for (const Value* v : {&start, &stop, &step})
        if (!v->isNone() && !v->isInt() && !v->isBool())
            return error("slice indices must be integers or None");
    const int64_t st = step.isNone() ? 1 : step.asInt();
    if (st == 0) return error("slice step cannot be zero");
    if (st == std::numeric_limits<int64_t>::min()) return error("slice step out of range");
    return pythonSlice(obj, start.isNone() ? 0 : start.asInt(), stop.isNone() ? 0 : stop.asInt(), st,
                       !start.isNone(), !stop.isNone());
}

Result<Value> Interpreter::evalBinary(const std::string& op, const Value& a, const Value& b) {
    if (op == "~") {
        if (a.isCallable() || b.isCallable()) {
            KESTREL_RETURN_IF_ERROR(requireDefined(a));
            KESTREL_RETURN_IF_ERROR(requireDefined(b));
        }
        std::string s = toPythonStr(a) + toPythonStr(b);
        KESTREL_RETURN_IF_ERROR(checkSize(s.size()));
        return Value(std::move(s));
    }
    KESTREL_RETURN_IF_ERROR(requireDefined(a));
    KESTREL_RETURN_IF_ERROR(requireDefined(b));
    const bool numbers = a.isNumber() && b.isNumber();
    const bool useFloat = a.isFloat() || b.isFloat();
    if (op == "+") {
        if (numbers) {
            if (useFloat) return Value(a.asFloat() + b.asFloat());
            int64_t r;
            if (__builtin_add_overflow(a.asInt(), b.asInt(), &r)) return error("integer overflow in +");
            return Value(r);
        }
        if (a.isString() && b.isString()) {
            KESTREL_RETURN_IF_ERROR(checkSize(a.asString().size() + b.asString().size()));
            return Value(a.asString() + b.asString());
        }
        if (a.isList() && b.isList() && a.isTuple() == b.isTuple()) {
            KESTREL_RETURN_IF_ERROR(checkSize((a.asList().size() + b.asList().size()) * sizeof(Value)));
            List items = a.asList();
            items.insert(items.end(), b.asList().begin(), b.asList().end());
            return Value(std::move(items), a.isTuple());
        }
        return error(unsupported("+", a, b));
    }
    if (op == "-") {
        if (!numbers) return error(unsupported("-", a, b));
        if (useFloat) return Value(a.asFloat() - b.asFloat());
        int64_t r;
        if (__builtin_sub_overflow(a.asInt(), b.asInt(), &r)) return error("integer overflow in -");
        return Value(r);
    }
    if (op == "*") {
        if (numbers) {
            if (useFloat) return Value(a.asFloat() * b.asFloat());
            int64_t r;
            if (__builtin_mul_overflow(a.asInt(), b.asInt(), &r)) return error("integer overflow in *");
            return Value(r);
        }
        const Value* seq = (a.isString() || a.isList()) ? &a : &b;
        const Value* count = seq == &a ? &b : &a;
        if ((seq->isString() || seq->isList()) && (count->isInt() || count->isBool())) {
            const int64_t times = std::max<int64_t>(0, count->asInt());
            const size_t unit = seq->isString() ? seq->asString().size() : seq->asList().size() * sizeof(Value);
            if (unit != 0 && static_cast<uint64_t>(times) > limits_.maxOutputBytes / unit + 1)
                return checkSize(limits_.maxOutputBytes + 1);
            KESTREL_RETURN_IF_ERROR(checkSize(unit * static_cast<size_t>(times)));
            if (seq->isString()) {
                std::string s;
                for (int64_t i = 0; i < times; ++i) s += seq->asString();
                return Value(std::move(s));
            }
            List items;
            for (int64_t i = 0; i < times; ++i) items.insert(items.end(), seq->asList().begin(), seq->asList().end());
            return Value(std::move(items), seq->isTuple());
        }
        return error(unsupported("*", a, b));
    }
    if (op == "/" || op == "//" || op == "%") {
        if (op == "%" && a.isString()) {
            auto formatted = percentFormat(a.asString(), b);
            if (!formatted) return error(formatted.status().message());
            KESTREL_RETURN_IF_ERROR(checkSize(formatted->size()));
            return Value(std::move(*formatted));
        }
        if (!numbers) return error(unsupported(op.c_str(), a, b));
        if (b.asFloat() == 0) return error(useFloat ? "float division by zero" : "division by zero");
        if (op == "/") return Value(a.asFloat() / b.asFloat());
        if (useFloat) {
            if (op == "%") return Value(floorMod(a.asFloat(), b.asFloat()));
            return Value(std::floor(a.asFloat() / b.asFloat()));
        }
        const int64_t x = a.asInt(), y = b.asInt();
        if (x == std::numeric_limits<int64_t>::min() && y == -1) return error("integer overflow");
        int64_t q = x / y, r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) { --q; r += y; }
        return Value(op == "//" ? q : r);
    }
    if (op == "**") {
        if (!numbers) return error(unsupported("**", a, b));
        if (!useFloat && b.asInt() >= 0) {
            int64_t result = 1, base = a.asInt(), e = b.asInt();
            while (e > 0) {
                if (e & 1) {
                    if (__builtin_mul_overflow(result, base, &result)) return error("integer overflow in **");
                }
                e >>= 1;
                if (e > 0 && __builtin_mul_overflow(base, base, &base)) return error("integer overflow in **");
            }
            return Value(result);
        }
        if (a.asFloat() == 0 && b.asFloat() < 0) return error("0.0 cannot be raised to a negative power");
        return Value(std::pow(a.asFloat(), b.asFloat()));
    }
    return error("unknown operator '" + op + "'");
}

Result<bool> Interpreter::evalCompare(const std::string& op, const Value& a, const Value& b) {
    if (op == "==") return a.equals(b);
    if (op == "!=") return !a.equals(b);
    if (op == "in" || op == "notin") {
        const bool negate = op == "notin";
        if (b.isString()) {
            if (!a.isString()) {
                KESTREL_RETURN_IF_ERROR(requireDefined(a));
                return error(std::string("'in <string>' requires string as left operand, not ") + a.typeName());
            }
            return (b.asString().find(a.asString()) != std::string::npos) != negate;
        }
        if (b.isDict()) return (b.asDict().find(a) != nullptr) != negate;
        if (b.isList()) {
            for (const Value& item : b.asList())
                if (item.equals(a)) return !negate;
            return negate;
        }
        if (b.isUndefined()) return negate;
        return error(std::string("argument of type '") + b.typeName() + "' is not iterable");
    }
    KESTREL_RETURN_IF_ERROR(requireDefined(a));
    KESTREL_RETURN_IF_ERROR(requireDefined(b));
    int c = 0;
    if (a.isNumber() && b.isNumber()) {
        const double x = a.asFloat(), y = b.asFloat();
        if (!a.isFloat() && !b.isFloat()) c = a.asInt() < b.asInt() ? -1 : (a.asInt() > b.asInt() ? 1 : 0);
        else if (std::isnan(x) || std::isnan(y)) return false;
        else c = x < y ? -1 : (x > y ? 1 : 0);
    } else if (a.isString() && b.isString()) {
        const int r = a.asString().compare(b.asString());
        c = r < 0 ? -1 : (r > 0 ? 1 : 0);
    } else if (a.isList() && b.isList()) {
        const List& x = a.asList();
        const List& y = b.asList();
        size_t i = 0;
        while (i < x.size() && i < y.size() && x[i].equals(y[i])) ++i;
        if (i < x.size() && i < y.size()) {
            auto lt = evalCompare("<", x[i], y[i]);
            if (!lt) return lt;
            c = *lt ? -1 : 1;
        } else {
            c = x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
        }
    } else {
        return error("'" + op + "' not supported between instances of '" + a.typeName() + "' and '" + b.typeName() + "'");
    }
    if (op == "<") return c < 0;
    if (op == "<=") return c <= 0;
    if (op == ">") return c > 0;
    return c >= 0;
}

}  // namespace kestrel::jinja
