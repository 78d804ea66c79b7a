// jinja2's builtin tests (`x is defined`, `x is string`, `n is divisibleby 3` ...).
#include "template/interpreter.h"

#include <cmath>
#include <unordered_map>

namespace kestrel::jinja {

namespace {

using TestFn = Result<bool> (*)(Interpreter&, const Value&, const CallArgs&);

Result<const Value*> needArg(Interpreter& in, const CallArgs& a, const char* test) {
    const Value* v = a.get(0, "other");
    if (!v) v = a.get(0, "value");
    if (!v) return in.error(std::string("test '") + test + "' needs an argument");
    return v;
}

#define KESTREL_COMPARE_TEST(fn, op)                                              \
    Result<bool> fn(Interpreter& in, const Value& v, const CallArgs& a) {         \
        auto other = needArg(in, a, op);                                          \
        if (!other) return other.status();                                        \
        return in.evalCompare(op, v, **other);                                    \
    }
KESTREL_COMPARE_TEST(tEq, "==")
KESTREL_COMPARE_TEST(tNe, "!=")
KESTREL_COMPARE_TEST(tLt, "<")
KESTREL_COMPARE_TEST(tLe, "<=")
KESTREL_COMPARE_TEST(tGt, ">")
KESTREL_COMPARE_TEST(tGe, ">=")
KESTREL_COMPARE_TEST(tIn, "in")
#undef KESTREL_COMPARE_TEST

Result<bool> tDefined(Interpreter&, const Value& v, const CallArgs&) { return !v.isUndefined(); }
Result<bool> tUndefined(Interpreter&, const Value& v, const CallArgs&) { return v.isUndefined(); }
Result<bool> tNone(Interpreter&, const Value& v, const CallArgs&) { return v.isNone(); }
Result<bool> tBoolean(Interpreter&, const Value& v, const CallArgs&) { return v.isBool(); }
Result<bool> tTrue(Interpreter&, const Value& v, const CallArgs&) { return v.isBool() && v.asBool(); }
Result<bool> tFalse(Interpreter&, const Value& v, const CallArgs&) { return v.isBool() && !v.asBool(); }
Result<bool> tInteger(Interpreter&, const Value& v, const CallArgs&) { return v.isInt(); }
Result<bool> tFloat(Interpreter&, const Value& v, const CallArgs&) { return v.isFloat(); }
Result<bool> tNumber(Interpreter&, const Value& v, const CallArgs&) { return v.isNumber(); }
Result<bool> tString(Interpreter&, const Value& v, const CallArgs&) { return v.isString(); }
Result<bool> tMapping(Interpreter&, const Value& v, const CallArgs&) { return v.isDict(); }
Result<bool> tIterable(Interpreter&, const Value& v, const CallArgs&) {
    return v.isString() || v.isList() || v.isDict() || v.isUndefined();
}
Result<bool> tSequence(Interpreter&, const Value& v, const CallArgs&) {
    return v.isString() || v.isList() || v.isDict() || v.isUndefined();
}
Result<bool> tCallable(Interpreter&, const Value& v, const CallArgs&) { return v.isCallable() || v.isUndefined(); }
Result<bool> tLower(Interpreter& in, const Value& v, const CallArgs& a) {
    if (!v.isString()) return false;
    auto r = in.call(in.getAttr(v, "islower").value(), a);
    if (!r) return r.status();
    return r->truthy();
}
Result<bool> tUpper(Interpreter& in, const Value& v, const CallArgs& a) {
    if (!v.isString()) return false;
    auto r = in.call(in.getAttr(v, "isupper").value(), a);
    if (!r) return r.status();
    return r->truthy();
}

Result<bool> parity(Interpreter& in, const Value& v, int64_t want) {
    KESTREL_RETURN_IF_ERROR(in.requireDefined(v));
    if (!v.isInt() && !v.isBool()) return in.error(std::string("odd/even need an integer, not ") + v.typeName());
    const int64_t m = v.asInt() % 2;
    return (m != 0) == (want != 0);
}
Result<bool> tOdd(Interpreter& in, const Value& v, const CallArgs&) { return parity(in, v, 1); }
Result<bool> tEven(Interpreter& in, const Value& v, const CallArgs&) { return parity(in, v, 0); }
Result<bool> tDivisibleBy(Interpreter& in, const Value& v, const CallArgs& a) {
    const Value* n = a.get(0, "num");
    if (!n) return in.error("divisibleby needs a number");
    KESTREL_RETURN_IF_ERROR(in.requireDefined(v));
    if (!v.isNumber() || !n->isNumber()) return in.error("divisibleby needs numbers");
    if (n->asFloat() == 0) return in.error("integer division or modulo by zero");
    if (v.isFloat() || n->isFloat()) return std::fmod(v.asFloat(), n->asFloat()) == 0;
    return v.asInt() % n->asInt() == 0;
}
Result<bool> tSameAs(Interpreter& in, const Value& v, const CallArgs& a) {
    auto other = needArg(in, a, "sameas");
    if (!other) return other.status();
    const Value& o = **other;
    if (v.kind() != o.kind()) return false;
    if (v.isNone() || v.isUndefined()) return true;
    if (v.isBool()) return v.asBool() == o.asBool();
    return v.equals(o) && (v.isInt() || v.isString());
}
Result<bool> tEscaped(Interpreter&, const Value&, const CallArgs&) { return false; }

const std::unordered_map<std::string, TestFn>& testTable() {
    static const std::unordered_map<std::string, TestFn> table = {
        {"defined", tDefined}, {"undefined", tUndefined}, {"none", tNone},         {"boolean", tBoolean},
        {"true", tTrue},       {"false", tFalse},         {"integer", tInteger},   {"float", tFloat},
        {"number", tNumber},   {"string", tString},       {"mapping", tMapping},   {"iterable", tIterable},
        {"sequence", tSequence}, {"callable", tCallable}, {"lower", tLower},       {"upper", tUpper},
        {"odd", tOdd},         {"even", tEven},           {"divisibleby", tDivisibleBy}, {"sameas", tSameAs},
        {"escaped", tEscaped}, {"eq", tEq},               {"equalto", tEq},        {"==", tEq},
        {"ne", tNe},           {"!=", tNe},               {"lt", tLt},             {"lessthan", tLt},
        {"<", tLt},            {"le", tLe},               {"<=", tLe},             {"gt", tGt},
        {"greaterthan", tGt},  {">", tGt},                {"ge", tGe},             {">=", tGe},
        {"in", tIn},
    };
    return table;
}

}  // namespace

Result<bool> runTest(Interpreter& in, const std::string& name, const Value& input, const CallArgs& args,
                     bool& found) {
    const auto& table = testTable();
    auto it = table.find(name);
    found = it != table.end();
    if (!found) return false;
    return it->second(in, input, args);
}

}  // namespace kestrel::jinja
