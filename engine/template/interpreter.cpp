#include "template/interpreter.h"

#include "template/utf8_text.h"

#include <cmath>
#include <limits>

namespace kestrel::jinja {

namespace {

struct DepthGuard {
    int& d;
    explicit DepthGuard(int& depth) : d(depth) { ++d; }
    ~DepthGuard() { --d; }
};

std::string undefinedMessage(const Value& v) {
    return v.undefinedHint().empty() ? std::string("a value is undefined") : v.undefinedHint();
}

}  // namespace

Interpreter::Interpreter(const LexedTemplate& lexed, const RenderLimits& limits, std::optional<std::time_t> now)
    : lexed_(lexed), limits_(limits), now_(now) {
    installGlobals(globals_);
}

Status Interpreter::error(const std::string& message) const {
    return Status(ErrorCode::InvalidArgument, "template " + lexed_.position(offset_) + ": " + message);
}

Status Interpreter::step() {
    if (++steps_ > limits_.maxSteps)
        return error("the template ran more than " + std::to_string(limits_.maxSteps) +
                     " steps (a runaway loop?); rendering stopped");
    return Status::ok();
}

Status Interpreter::checkSize(size_t bytes) const {
    if (bytes > limits_.maxOutputBytes)
        return error("the template produced more than " + std::to_string(limits_.maxOutputBytes) +
                     " bytes; rendering stopped");
    return Status::ok();
}

Status Interpreter::requireDefined(const Value& v) const {
    if (v.isUndefined()) return error(undefinedMessage(v));
    if (v.isCallable() && v.asCallable().kind == Callable::Kind::Unsafe) return error(v.asCallable().name);
    return Status::ok();
}

Result<std::string> Interpreter::render(const Body& body, const std::vector<std::pair<std::string, Value>>& vars) {
    frames_.clear();
    frames_.emplace_back();
    for (const auto& [k, v] : vars) frames_[0].vars[k] = v;
    std::string out;
    KESTREL_RETURN_IF_ERROR(execBody(body, out));
    return out;
}

Value Interpreter::lookup(const std::string& name) const {
    for (size_t i = frames_.size(); i-- > 0;) {
        auto it = frames_[i].vars.find(name);
        if (it != frames_[i].vars.end()) return it->second;
        if (frames_[i].barrier && i > 0) {
            auto top = frames_[0].vars.find(name);
            if (top != frames_[0].vars.end()) return top->second;
            break;
        }
    }
    auto g = globals_.find(name);
    if (g != globals_.end()) return g->second;
    return Value::undefined("'" + name + "' is undefined");
}

void Interpreter::assign(const std::string& name, Value v) { frames_.back().vars[name] = std::move(v); }

// --- statements ------------------------------------------------------------------------------

Status Interpreter::execBody(const Body& body, std::string& out) {
    DepthGuard g(evalDepth_);
    if (evalDepth_ > limits_.maxEvalDepth) return error("the template nests too deeply");
    for (const auto& s : body) {
        KESTREL_RETURN_IF_ERROR(exec(*s, out));
        if (flow_ != Flow::Normal) return Status::ok();
    }
    return Status::ok();
}

Status Interpreter::exec(const Stmt& s, std::string& out) {
    offset_ = s.offset;
    KESTREL_RETURN_IF_ERROR(step());
    switch (s.kind) {
        case Stmt::Kind::Data:
            out += s.text;
            return checkSize(out.size());
        case Stmt::Kind::Output: {
            auto v = eval(*s.exprs[0]);
            if (!v) return v.status();
            if (v->isCallable() && v->asCallable().kind == Callable::Kind::Unsafe) return requireDefined(*v);
            out += toPythonStr(*v);
            return checkSize(out.size());
        }
        case Stmt::Kind::If: {
            for (size_t i = 0; i < s.exprs.size(); ++i) {
                auto c = eval(*s.exprs[i]);
                if (!c) return c.status();
                if (c->truthy()) return execBody(s.bodies[i], out);
            }
            if (s.bodies.size() > s.exprs.size()) return execBody(s.bodies.back(), out);
            return Status::ok();
        }
        case Stmt::Kind::For: return execFor(s, out);
        case Stmt::Kind::Set: return execSet(s);
        case Stmt::Kind::SetBlock: {
            std::string captured;
            KESTREL_RETURN_IF_ERROR(execBody(s.bodies[0], captured));
            auto v = applyFilterChain(s.filters, Value(std::move(captured)));
            if (!v) return v.status();
            assign(s.targets[0], std::move(*v));
            return Status::ok();
        }
        case Stmt::Kind::FilterBlock: {
            std::string captured;
            KESTREL_RETURN_IF_ERROR(execBody(s.bodies[0], captured));
            auto v = applyFilterChain(s.filters, Value(std::move(captured)));
            if (!v) return v.status();
            out += toPythonStr(*v);
            return checkSize(out.size());
        }
        case Stmt::Kind::Macro: {
            auto c = std::make_shared<Callable>();
            c->kind = Callable::Kind::Macro;
            c->name = s.macro->name;
            c->macro = s.macro;
            assign(s.macro->name, Value::makeCallable(std::move(c)));
            return Status::ok();
        }
        case Stmt::Kind::CallBlock: {
            const Expr& call = *s.exprs[0];
            auto callee = eval(*call.args[0]);
            if (!callee) return callee.status();
            auto args = evalArgs(call, 1);
            if (!args) return args.status();
            auto caller = std::make_shared<Callable>();
            caller->kind = Callable::Kind::Macro;
            caller->name = "caller";
            caller->macro = s.macro;
            if (!callee->isCallable() || callee->asCallable().kind != Callable::Kind::Macro)
                return error("a call block needs a macro");
            Callable withCaller = callee->asCallable();
            withCaller.caller = Value::makeCallable(std::move(caller));
            auto v = callMacro(withCaller, *args);
            if (!v) return v.status();
            out += toPythonStr(*v);
            return checkSize(out.size());
        }
        case Stmt::Kind::Break: flow_ = Flow::Break; return Status::ok();
        case Stmt::Kind::Continue: flow_ = Flow::Continue; return Status::ok();
        case Stmt::Kind::Scope: return execBody(s.bodies[0], out);
    }
    return Status::ok();
}

Status Interpreter::execSet(const Stmt& s) {
    auto v = eval(*s.exprs[0]);
    if (!v) return v.status();
    if (!s.attrTarget.empty()) {
        Value ns = lookup(s.targets[0]);
        if (!ns.isNamespace())
            return error("cannot assign attribute '" + s.attrTarget + "' of '" + s.targets[0] +
                         "': it is not a namespace");
        KESTREL_RETURN_IF_ERROR(checkNamespaceValue(*v));
        ns.namespaceAttributes().set(Value(s.attrTarget), std::move(*v));
        return Status::ok();
    }
    if (s.targets.size() == 1) {
        assign(s.targets[0], std::move(*v));
        return Status::ok();
    }
    auto items = iterate(*v);
    if (!items) return items.status();
    if (items->size() != s.targets.size())
        return error("cannot unpack " + std::to_string(items->size()) + " values into " +
                     std::to_string(s.targets.size()) + " names");
    for (size_t i = 0; i < s.targets.size(); ++i) assign(s.targets[i], (*items)[i]);
    return Status::ok();
}

Status Interpreter::execFor(const Stmt& s, std::string& out) {
    auto iterable = eval(*s.exprs[0]);
    if (!iterable) return iterable.status();
    std::shared_ptr<const List> all;
    if (iterable->isList()) {
        all = iterable->sharedList();  // shares the list, no copy
    } else {
        auto listed = iterate(*iterable);
        if (!listed) return listed.status();
        all = std::make_shared<const List>(std::move(*listed));
    }
    frames_.emplace_back();
    struct PopFrame {
        std::vector<Frame>& f;
        ~PopFrame() { f.pop_back(); }
    } pop{frames_};

    auto bindTargets = [&](const Value& item) -> Status {
        if (s.targets.size() == 1) {
            assign(s.targets[0], item);
            return Status::ok();
        }
        auto parts = iterate(item);
        if (!parts) return parts.status();
        if (parts->size() != s.targets.size())
            return error("cannot unpack " + std::to_string(parts->size()) + " values into " +
                         std::to_string(s.targets.size()) + " loop variables");
        for (size_t i = 0; i < s.targets.size(); ++i) assign(s.targets[i], (*parts)[i]);
        return Status::ok();
    };

    auto state = std::make_shared<LoopState>();
    if (s.exprs.size() > 1) {
        List kept;
        for (const Value& item : *all) {
            KESTREL_RETURN_IF_ERROR(step());
            KESTREL_RETURN_IF_ERROR(bindTargets(item));
            auto keep = eval(*s.exprs[1]);
            if (!keep) return keep.status();
            if (keep->truthy()) kept.push_back(item);
        }
        state->items = std::make_shared<const List>(std::move(kept));
    } else {
        state->items = std::move(all);
    }
    const List& items = *state->items;
    const Value loop = Value::makeLoop(state);
    const auto n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
        KESTREL_RETURN_IF_ERROR(step());
        // jinja2 gives every iteration a fresh scope: what the body sets is gone next time round.
        frames_.back().vars.clear();
        KESTREL_RETURN_IF_ERROR(bindTargets(items[static_cast<size_t>(i)]));
        state->index0 = i;
        assign("loop", loop);
        KESTREL_RETURN_IF_ERROR(execBody(s.bodies[0], out));
        if (flow_ == Flow::Break) { flow_ = Flow::Normal; break; }
        flow_ = Flow::Normal;
    }
    if (n == 0 && s.bodies.size() > 1) {
        frames_.back().vars.erase("loop");
        KESTREL_RETURN_IF_ERROR(execBody(s.bodies[1], out));
    }
    return Status::ok();
}

// --- expressions -----------------------------------------------------------------------------

Result<Value> Interpreter::eval(const Expr& e) {
    DepthGuard g(evalDepth_);
    if (evalDepth_ > limits_.maxEvalDepth) return error("the template nests too deeply");
    offset_ = e.offset;
    KESTREL_RETURN_IF_ERROR(step());
    auto v = evalInner(e);
    if (v && v->depth() > limits_.maxValueDepth) {
        offset_ = e.offset;
        return error("values nested deeper than " + std::to_string(limits_.maxValueDepth) + " levels");
    }
    return v;
}

Status Interpreter::checkNamespaceValue(const Value& v) const {
    if (v.holdsNamespace()) return error("a namespace cannot be stored inside a namespace");
    return Status::ok();
}

Result<CallArgs> Interpreter::evalArgs(const Expr& e, size_t firstArg) {
    CallArgs args;
    for (size_t i = firstArg; i < e.args.size(); ++i) {
        auto v = eval(*e.args[i]);
        if (!v) return v.status();
        args.positional.push_back(std::move(*v));
    }
    for (const auto& [k, x] : e.kwargs) {
        auto v = eval(*x);
        if (!v) return v.status();
        args.keyword.emplace_back(k, std::move(*v));
    }
    return args;
}

Result<Value> Interpreter::evalInner(const Expr& e) {
    switch (e.kind) {
        case Expr::Kind::Literal: return e.literal;
        case Expr::Kind::Name: return lookup(e.name);
        case Expr::Kind::ListLit:
        case Expr::Kind::TupleLit: {
            List items;
            for (const auto& a : e.args) {
                auto v = eval(*a);
                if (!v) return v;
                items.push_back(std::move(*v));
            }
            return Value(std::move(items), e.kind == Expr::Kind::TupleLit);
        }
        case Expr::Kind::DictLit: {
            Dict d;
            for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
                auto k = eval(*e.args[i]);
                if (!k) return k;
                auto v = eval(*e.args[i + 1]);
                if (!v) return v;
                d.set(std::move(*k), std::move(*v));
            }
            return Value(std::move(d));
        }
        case Expr::Kind::GetAttr: {
            auto obj = eval(*e.args[0]);
            if (!obj) return obj;
            offset_ = e.offset;
            return getAttr(*obj, e.name);
        }
        case Expr::Kind::GetItem: {
            auto obj = eval(*e.args[0]);
            if (!obj) return obj;
            auto key = eval(*e.args[1]);
            if (!key) return key;
            offset_ = e.offset;
            return getItem(*obj, *key);
        }
        case Expr::Kind::Slice: {
            auto obj = eval(*e.args[0]);
            if (!obj) return obj;
            Value parts[3] = {Value::none(), Value::none(), Value::none()};
            for (int i = 0; i < 3; ++i) {
                if (!e.args[static_cast<size_t>(i) + 1]) continue;
                auto v = eval(*e.args[static_cast<size_t>(i) + 1]);
                if (!v) return v;
                parts[i] = std::move(*v);
            }
            offset_ = e.offset;
            return evalSlice(*obj, parts[0], parts[1], parts[2]);
        }
        case Expr::Kind::Call: {
            auto callee = eval(*e.args[0]);
            if (!callee) return callee;
            auto args = evalArgs(e, 1);
            if (!args) return args.status();
            offset_ = e.offset;
            return call(*callee, *args);
        }
        case Expr::Kind::Filter: {
            auto input = eval(*e.args[0]);
            if (!input) return input;
            auto args = evalArgs(e, 1);
            if (!args) return args.status();
            offset_ = e.offset;
            return applyFilter(e.name, *input, *args);
        }
        case Expr::Kind::Test: {
            auto input = eval(*e.args[0]);
            if (!input) return input;
            auto args = evalArgs(e, 1);
            if (!args) return args.status();
            offset_ = e.offset;
            auto r = applyTest(e.name, *input, *args);
            if (!r) return r.status();
            return Value(*r != e.negated);
        }
        case Expr::Kind::Neg:
        case Expr::Kind::Pos: {
            auto v = eval(*e.args[0]);
            if (!v) return v;
            offset_ = e.offset;
            KESTREL_RETURN_IF_ERROR(requireDefined(*v));
            if (!v->isNumber()) return error(std::string("bad operand type for unary ") + (e.kind == Expr::Kind::Neg ? "-" : "+") + ": '" + v->typeName() + "'");
            if (e.kind == Expr::Kind::Pos) return v->isBool() ? Value(v->asInt()) : *v;
            if (v->isFloat()) return Value(-v->asFloat());
            if (v->asInt() == std::numeric_limits<int64_t>::min()) return error("integer overflow");
            return Value(-v->asInt());
        }
        case Expr::Kind::Not: {
            auto v = eval(*e.args[0]);
            if (!v) return v;
            return Value(!v->truthy());
        }
        case Expr::Kind::And:
        case Expr::Kind::Or: {
            auto a = eval(*e.args[0]);
            if (!a) return a;
            if (a->truthy() == (e.kind == Expr::Kind::Or)) return a;
            return eval(*e.args[1]);
        }
        case Expr::Kind::Binary: {
            auto a = eval(*e.args[0]);
            if (!a) return a;
            auto b = eval(*e.args[1]);
            if (!b) return b;
            offset_ = e.offset;
            return evalBinary(e.name, *a, *b);
        }
        case Expr::Kind::Compare: {
            auto left = eval(*e.args[0]);
            if (!left) return left;
            Value lhs = std::move(*left);
            for (size_t i = 0; i < e.ops.size(); ++i) {
                auto right = eval(*e.args[i + 1]);
                if (!right) return right;
                offset_ = e.offset;
                auto r = evalCompare(e.ops[i], lhs, *right);
                if (!r) return r.status();
                if (!*r) return Value(false);
                lhs = std::move(*right);
            }
            return Value(true);
        }
        case Expr::Kind::Cond: {
            auto c = eval(*e.args[0]);
            if (!c) return c;
            if (c->truthy()) return eval(*e.args[1]);
            if (!e.args[2]) return Value::undefined("the condition of an inline if was false and there is no else");
            return eval(*e.args[2]);
        }
    }
    return error("unknown expression");
}

Result<Value> Interpreter::applyFilterChain(const std::vector<ExprPtr>& filters, Value input) {
    for (const auto& f : filters) {
        auto args = evalArgs(*f, 1);
        if (!args) return args.status();
        offset_ = f->offset;
        auto v = applyFilter(f->name, input, *args);
        if (!v) return v;
        input = std::move(*v);
    }
    return input;
}

Result<Value> Interpreter::applyFilter(const std::string& name, const Value& input, const CallArgs& args) {
    bool found = false;
    auto r = runFilter(*this, name, input, args, found);
    if (!found) return error("no filter named '" + name + "'");
    if (r && r->isString()) KESTREL_RETURN_IF_ERROR(checkSize(r->asString().size()));
    return r;
}

Result<bool> Interpreter::applyTest(const std::string& name, const Value& input, const CallArgs& args) {
    bool found = false;
    auto r = runTest(*this, name, input, args, found);
    if (!found) return error("no test named '" + name + "'");
    return r;
}

Result<Value> Interpreter::call(const Value& callee, const CallArgs& args) {
    KESTREL_RETURN_IF_ERROR(requireDefined(callee));
    if (!callee.isCallable()) return error(std::string("'") + callee.typeName() + "' object is not callable");
    const Callable& c = callee.asCallable();
    if (c.kind == Callable::Kind::Macro) return callMacro(c, args);
    auto r = c.builtin(*this, c.self, args);
    if (r && r->isString()) KESTREL_RETURN_IF_ERROR(checkSize(r->asString().size()));
    return r;
}

Result<Value> Interpreter::callMacro(const Callable& c, const CallArgs& args) {
    DepthGuard g(callDepth_);
    if (callDepth_ > limits_.maxCallDepth)
        return error("macro '" + c.name + "' recursed more than " + std::to_string(limits_.maxCallDepth) + " levels deep");
    const MacroDef& m = *c.macro;
    if (args.positional.size() > m.params.size())
        return error("macro '" + c.name + "' takes " + std::to_string(m.params.size()) + " arguments, " +
                     std::to_string(args.positional.size()) + " given");
    Frame frame;
    frame.barrier = true;
    for (const auto& [k, v] : args.keyword) {
        bool known = false;
        for (const auto& p : m.params) known = known || p == k;
        if (!known) return error("macro '" + c.name + "' has no argument '" + k + "'");
    }
    frames_.push_back(std::move(frame));
    struct PopFrame {
        std::vector<Frame>& f;
        ~PopFrame() { f.pop_back(); }
    } pop{frames_};
    for (size_t i = 0; i < m.params.size(); ++i) {
        const Value* given = args.get(i, m.params[i]);
        if (given) {
            assign(m.params[i], *given);
        } else if (m.defaults[i]) {
            auto d = eval(*m.defaults[i]);
            if (!d) return d;
            assign(m.params[i], std::move(*d));
        } else {
            assign(m.params[i], Value::undefined("parameter '" + m.params[i] + "' of macro '" + c.name + "' was not given"));
        }
    }
    if (!c.caller.isUndefined()) assign("caller", c.caller);
    std::string out;
    const Flow saved = flow_;
    KESTREL_RETURN_IF_ERROR(execBody(m.body, out));
    flow_ = saved;
    return Value(std::move(out));
}

}  // namespace kestrel::jinja
