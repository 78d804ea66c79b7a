// Renders a parsed template: the state of one render (scopes, output, limits).
//
// Semantics follow jinja2 in transformers' configuration (ImmutableSandboxedEnvironment,
// default Undefined, autoescape off): a missing attribute or key is undefined, which
// prints as "" and is falsy, while arithmetic, attribute access or a call on it is an
// error; methods that would mutate a list or dict are rejected as the sandbox does;
// `range` is capped at 100000 items as in jinja2's sandbox.
//
// Every expression and statement evaluated costs one step; loops, macro recursion
// and output size are bounded by RenderLimits, so a hostile template ends with an error.
// An Interpreter is used for one render on one thread.
#pragma once

#include "kestrel/status.h"
#include "template/ast.h"
#include "template/callable.h"
#include "template/lexer.h"
#include "template/value.h"

#include <ctime>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kestrel::jinja {

struct RenderLimits {
    uint64_t maxSteps = 10'000'000;       // expression + statement evaluations
    int maxCallDepth = 64;                // nested macro calls
    int maxEvalDepth = 400;               // nested evaluation (expressions, blocks, calls)
    size_t maxOutputBytes = 8u << 20;     // rendered text and any string built on the way
    int maxValueDepth = 200;              // lists and dicts inside lists and dicts
};

class Interpreter {
public:
    Interpreter(const LexedTemplate& lexed, const RenderLimits& limits, std::optional<std::time_t> now);

    // `vars` become the template's top-level variables.
    Result<std::string> render(const Body& body, const std::vector<std::pair<std::string, Value>>& vars);

    // For builtins (filters, methods, functions).
    Status error(const std::string& message) const;  // at the node being evaluated
    Result<Value> call(const Value& callee, const CallArgs& args);
    Result<Value> applyFilter(const std::string& name, const Value& input, const CallArgs& args);
    Result<bool> applyTest(const std::string& name, const Value& input, const CallArgs& args);
    Status checkSize(size_t bytes) const;
    Status step();
    std::optional<std::time_t> now() const { return now_; }
    const RenderLimits& limits() const { return limits_; }

    // Items a for loop or a filter iterates: list items, dict keys, string characters.
    Result<List> iterate(const Value& v);
    Result<Value> getAttr(const Value& obj, const std::string& name);
    Result<Value> getItem(const Value& obj, const Value& key);
    // Rejects undefined operands the way jinja2's Undefined does.
    Status requireDefined(const Value& v) const;
    // Namespaces may not hold namespaces: that would allow cycles and unbounded nesting.
    Status checkNamespaceValue(const Value& v) const;
    // Python comparison: == != < <= > >= in notin.
    Result<bool> evalCompare(const std::string& op, const Value& a, const Value& b);

private:
    struct Frame {
        std::unordered_map<std::string, Value> vars;
        bool barrier = false;  // a macro body: lookups skip to the template's top level
    };
    enum class Flow { Normal, Break, Continue };

    Status execBody(const Body& body, std::string& out);
    Status exec(const Stmt& s, std::string& out);
    Status execFor(const Stmt& s, std::string& out);
    Status execSet(const Stmt& s);
    Result<Value> eval(const Expr& e);
    Result<Value> evalInner(const Expr& e);
    Result<Value> evalBinary(const std::string& op, const Value& a, const Value& b);
    Result<Value> evalSlice(const Value& obj, const Value& start, const Value& stop, const Value& step);
    Result<CallArgs> evalArgs(const Expr& e, size_t firstArg);
    Result<Value> callMacro(const Callable& c, const CallArgs& args);
    Result<Value> applyFilterChain(const std::vector<ExprPtr>& filters, Value input);
    Result<Value> loopAttr(const Value& loop, const std::string& name);
    static std::string undefinedMessageFor(const Value& obj, const std::string& what);
    Value lookup(const std::string& name) const;
    void assign(const std::string& name, Value v);

    const LexedTemplate& lexed_;
    RenderLimits limits_;
    std::optional<std::time_t> now_;
    std::vector<Frame> frames_;
    std::unordered_map<std::string, Value> globals_;
    Flow flow_ = Flow::Normal;
    uint64_t steps_ = 0;
    int evalDepth_ = 0;
    int callDepth_ = 0;
    uint32_t offset_ = 0;  // where the current error would be reported
};

// Builtins, one table each (builtin_filters.cpp, builtin_tests.cpp, builtin_methods.cpp).
Result<Value> runFilter(Interpreter& in, const std::string& name, const Value& input, const CallArgs& args,
                        bool& found);
Result<bool> runTest(Interpreter& in, const std::string& name, const Value& input, const CallArgs& args,
                     bool& found);
// A bound method for `obj.name`, or undefined when the type has no such method.
Value findMethod(const Value& obj, const std::string& name);
// range, namespace, dict, raise_exception, strftime_now, cycler-free globals.
void installGlobals(std::unordered_map<std::string, Value>& globals);
Value pythonSlice(const Value& obj, int64_t start, int64_t stop, int64_t step, bool hasStart, bool hasStop);

}  // namespace kestrel::jinja
