#include "template/parser.h"

#include <algorithm>
#include <initializer_list>

namespace kestrel::jinja {

namespace {

class Parser {
public:
    Parser(const LexedTemplate& t, int maxDepth) : t_(t), toks_(t.tokens), maxDepth_(maxDepth) {}

    Result<Body> parseRoot() {
        Body body;
        std::string endTag;
        KESTREL_RETURN_IF_ERROR(parseBody(body, {}, endTag));
        return body;
    }

private:
    // --- token helpers -------------------------------------------------------------------
    const Token& cur() const { return toks_[pos_]; }
    const Token& peek(size_t n = 1) const { return toks_[std::min(pos_ + n, toks_.size() - 1)]; }
    void next() { if (pos_ + 1 < toks_.size()) ++pos_; }
    bool isOp(std::string_view op) const { return cur().type == TokenType::Operator && cur().text == op; }
    bool isName(std::string_view n) const { return cur().type == TokenType::Name && cur().text == n; }
    bool skipOp(std::string_view op) { if (isOp(op)) { next(); return true; } return false; }
    bool skipName(std::string_view n) { if (isName(n)) { next(); return true; } return false; }

    Status fail(const std::string& what) const { return failAt(cur().offset, what); }
    Status failAt(uint32_t offset, const std::string& what) const {
        return Status(ErrorCode::InvalidArgument, "template " + t_.position(offset) + ": " + what);
    }
    std::string describe(const Token& tok) const {
        switch (tok.type) {
            case TokenType::End: return "end of template";
            case TokenType::BlockEnd: return "'%}'";
            case TokenType::VariableEnd: return "'}}'";
            case TokenType::Data: return "template text";
            case TokenType::String: return "a string";
            default: return "'" + tok.text + "'";
        }
    }
    Status expectOp(std::string_view op) {
        if (!skipOp(op)) return fail("expected '" + std::string(op) + "', found " + describe(cur()));
        return Status::ok();
    }
    Result<std::string> expectName() {
        if (cur().type != TokenType::Name) return fail("expected a name, found " + describe(cur()));
        std::string n = cur().text;
        next();
        return n;
    }
    Status expectBlockEnd() {
        if (cur().type != TokenType::BlockEnd) return fail("expected '%}', found " + describe(cur()));
        next();
        return Status::ok();
    }

    struct DepthGuard {
        int& d;
        explicit DepthGuard(int& depth) : d(depth) { ++d; }
        ~DepthGuard() { --d; }
    };

    // Sets e's height from its children; chains built by loops (a + b + c ..., x.a.b ...,
    // filters) are as deep as long, so they are bounded here, not by recursion guards.
    Status seal(Expr& e) {
        int h = 0;
        for (const auto& a : e.args)
            if (a) h = std::max(h, a->height);
        for (const auto& [k, v] : e.kwargs) h = std::max(h, v->height);
        e.height = h + 1;
        if (e.height > maxDepth_)
            return failAt(e.offset, "expression nested deeper than " + std::to_string(maxDepth_) + " levels");
        return Status::ok();
    }

    ExprPtr make(Expr::Kind kind, uint32_t offset) {
        auto e = std::make_unique<Expr>();
        e->kind = kind;
        e->offset = offset;
        return e;
    }

    // --- statements ----------------------------------------------------------------------
    // Parses until a block tag whose keyword is one of `ends`; leaves the parser after that
    // keyword (inside the tag) and reports which keyword ended the body.
    Status parseBody(Body& body, std::initializer_list<std::string_view> ends, std::string& endTag) {
        DepthGuard g(depth_);
        if (depth_ > maxDepth_) return fail("blocks nested deeper than " + std::to_string(maxDepth_) + " levels");
        while (true) {
            const Token& tok = cur();
            if (tok.type == TokenType::End) {
                if (ends.size() == 0) return Status::ok();
                std::string expected;
                for (auto e : ends) expected += (expected.empty() ? "'" : " or '") + std::string(e) + "'";
                return fail("unexpected end of template, expected " + expected);
            }
            if (tok.type == TokenType::Data) {
                auto s = std::make_unique<Stmt>();
                s->kind = Stmt::Kind::Data;
                s->offset = tok.offset;
                s->text = tok.text;
                body.push_back(std::move(s));
                next();
                continue;
            }
            if (tok.type == TokenType::VariableBegin) {
                next();
                auto s = std::make_unique<Stmt>();
                s->kind = Stmt::Kind::Output;
                s->offset = tok.offset;
                auto e = parseTuple(true);
                if (!e) return e.status();
                s->exprs.push_back(std::move(*e));
                if (cur().type != TokenType::VariableEnd) return fail("expected '}}', found " + describe(cur()));
                next();
                body.push_back(std::move(s));
                continue;
            }
            if (tok.type != TokenType::BlockBegin) return fail("unexpected " + describe(tok));
            next();
            if (cur().type != TokenType::Name) return fail("expected a tag name after '{%', found " + describe(cur()));
            const std::string keyword = cur().text;
            for (auto e : ends) {
                if (keyword == e) {
                    next();
                    endTag = keyword;
                    return Status::ok();
                }
            }
            auto s = parseStatement(keyword);
            if (!s) return s.status();
            body.push_back(std::move(*s));
        }
    }

    Result<std::unique_ptr<Stmt>> parseStatement(const std::string& keyword) {
        auto s = std::make_unique<Stmt>();
        s->offset = cur().offset;
        next();
        if (keyword == "if") return parseIf(std::move(s));
        if (keyword == "for") return parseFor(std::move(s));
        if (keyword == "set") return parseSet(std::move(s));
        if (keyword == "macro") return parseMacro(std::move(s));
        if (keyword == "call") return parseCallBlock(std::move(s));
        if (keyword == "filter") return parseFilterBlock(std::move(s));
        if (keyword == "break" || keyword == "continue") {
            if (loopDepth_ == 0) return failAt(s->offset, "'" + keyword + "' outside of a loop");
            s->kind = keyword == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue;
            KESTREL_RETURN_IF_ERROR(expectBlockEnd());
            return s;
        }
        if (keyword == "generation") {
            s->kind = Stmt::Kind::Scope;
            KESTREL_RETURN_IF_ERROR(expectBlockEnd());
            s->bodies.emplace_back();
            std::string end;
            KESTREL_RETURN_IF_ERROR(parseBody(s->bodies[0], {"endgeneration"}, end));
            KESTREL_RETURN_IF_ERROR(expectBlockEnd());
            return s;
        }
        return failAt(s->offset, "unknown tag '" + keyword + "'");
    }

    Result<std::unique_ptr<Stmt>> parseIf(std::unique_ptr<Stmt> s) {
        s->kind = Stmt::Kind::If;
        while (true) {
            auto cond = parseTuple(true);
            if (!cond) return cond.status();
            s->exprs.push_back(std::move(*cond));
            KESTREL_RETURN_IF_ERROR(expectBlockEnd());
            s->bodies.emplace_back();
            std::string end;
            KESTREL_RETURN_IF_ERROR(parseBody(s->bodies.back(), {"elif", "else", "endif"}, end));
            if (end == "elif") continue;
            if (end == "else") {
                KESTREL_RETURN_IF_ERROR(expectBlockEnd());
                s->bodies.emplace_back();
                KESTREL_RETURN_IF_ERROR(parseBody(s->bodies.back(), {"endif"}, end));
            }
            KESTREL_RETURN_IF_ERROR(expectBlockEnd());
            return s;
        }
    }

    Status parseTargets(std::vector<std::string>& targets) {
        const bool paren = skipOp("(");
        while (true) {
            auto n = expectName();
            if (!n) return n.status();
            targets.push_back(*n);
            if (!skipOp(",")) break;
            if (cur().type != TokenType::Name) break;
        }
        if (paren) KESTREL_RETURN_IF_ERROR(expectOp(")"));
        return Status::ok();
    }

    Result<std::unique_ptr<Stmt>> parseFor(std::unique_ptr<Stmt> s) {
        s->kind = Stmt::Kind::For;
        KESTREL_RETURN_IF_ERROR(parseTargets(s->targets));
        if (!skipName("in")) return fail("expected 'in' in a for loop, found " + describe(cur()));
        auto iter = parseTuple(false);
        if (!iter) return iter.status();
        s->exprs.push_back(std::move(*iter));
        if (skipName("if")) {
            auto cond = parseExpression(true);
            if (!cond) return cond.status();
            s->exprs.push_back(std::move(*cond));
        }
        if (isName("recursive")) return fail("recursive loops are not supported");
        KESTREL_RETURN_IF_ERROR(expectBlockEnd());
        s->bodies.emplace_back();
        std::string end;
        ++loopDepth_;
        Status st = parseBody(s->bodies[0], {"else", "endfor"}, end);
        --loopDepth_;
        KESTREL_RETURN_IF_ERROR(st);
        if (end == "else") {
            KESTREL_RETURN_IF_ERROR(expectBlockEnd());
            s->bodies.emplace_back();
            KESTREL_RETURN_IF_ERROR(parseBody(s->bodies[1], {"endfor"}, end));
        }
        KESTREL_RETURN_IF_ERROR(expectBlockEnd());
        return s;
    }

    Status parseFilterChain(std::vector<ExprPtr>& filters) {
        do {
            auto f = parseFilter(nullptr);
            if (!f) return f.status();
            filters.push_back(std::move(*f));
        } while (skipOp("|"));
        return Status::ok();
    }

    Result<std::unique_ptr<Stmt>> parseSet(std::unique_ptr<Stmt> s) {
        s->kind = Stmt::Kind::Set;
        auto first = expectName();
        if (!first) return first.status();
        s->targets.push_back(*first);
        if (skipOp(".")) {
            auto attr = expectName();
            if (!attr) return attr.status();
            s->attrTarget = *attr;
        } else {
            while (skipOp(",")) {
                auto n = expectName();
                if (!n) return n.status();
                s->targets.push_back(*n);
            }
        }
        if (skipOp("=")) {
            auto value = parseTuple(true);
            if (!value) return value.status();
            s->exprs.push_back(std::move(*value));
            KESTREL_RETURN_IF_ERROR(expectBlockEnd());
            return s;
        }
        if (!s->attrTarget.empty() || s->targets.size() != 1) return fail("expected '=' in a set statement");
        s->kind = Stmt::Kind::SetBlock;
        if (skipOp("|")) KESTREL_RETURN_IF_ERROR(parseFilterChain(s->filters));
        KESTREL_RETURN_IF_ERROR(expectBlockEnd());
        s->bodies.emplace_back();
        std::string end;
        KESTREL_RETURN_IF_ERROR(parseBody(s->bodies[0], {"endset"}, end));
        KESTREL_RETURN_IF_ERROR(expectBlockEnd());
        return s;
    }

    Status parseParams(MacroDef& m) {
        KESTREL_RETURN_IF_ERROR(expectOp("("));
        while (!isOp(")")) {
            if (!m.params.empty()) KESTREL_RETURN_IF_ERROR(expectOp(","));
            if (isOp(")")) break;
            auto n = expectName();
            if (!n) return n.status();
            m.params.push_back(*n);
            if (skipOp("=")) {
                auto d = parseExpression(true);
                if (!d) return d.status();
                m.defaults.push_back(std::move(*d));
            } else {
                m.defaults.push_back(nullptr);
            }
        }
        next();
        return Status::ok();
    }

    Result<std::unique_ptr<Stmt>> parseMacro(std::unique_ptr<Stmt> s) {
        s->kind = Stmt::Kind::Macro;
        s->macro = std::make_shared<MacroDef>();
        auto name = expectName();
        if (!name) return name.status();
        s->macro->name = *name;
        KESTREL_RETURN_IF_ERROR(parseParams(*s->macro));
        KESTREL_RETURN_IF_ERROR(expectBlockEnd());
        std::string end;
        const int savedLoops = loopDepth_;
        loopDepth_ = 0;
        Status st = parseBody(s->macro->body, {"endmacro"}, end);
        loopDepth_ = savedLoops;
        KESTREL_RETURN_IF_ERROR(st);
        skipName(s->macro->name);
        KESTREL_RETURN_IF_ERROR(expectBlockEnd());
        return s;
    }

    Result<std::unique_ptr<Stmt>> parseCallBlock(std::unique_ptr<Stmt> s) {
        s->kind = Stmt::Kind::CallBlock;
        s->macro = std::make_shared<MacroDef>();
        s->macro->name = "caller";
        if (isOp("(")) KESTREL_RETURN_IF_ERROR(parseParams(*s->macro));
        auto call = parseExpression(true);
        if (!call) return call.status();
        if ((*call)->kind != Expr::Kind::Call) return failAt((*call)->offset, "expected a macro call in a call block");
        s->exprs.push_back(std::move(*call));
        KESTREL_RETURN_IF_ERROR(expectBlockEnd());
        std::string end;
        KESTREL_RETURN_IF_ERROR(parseBody(s->macro->body, {"endcall"}, end));
        KESTREL_RETURN_IF_ERROR(expectBlockEnd());
        return s;
    }

    Result<std::unique_ptr<Stmt>> parseFilterBlock(std::unique_ptr<Stmt> s) {
        s->kind = Stmt::Kind::FilterBlock;
        KESTREL_RETURN_IF_ERROR(parseFilterChain(s->filters));
        KESTREL_RETURN_IF_ERROR(expectBlockEnd());
        s->bodies.emplace_back();
        std::string end;
        KESTREL_RETURN_IF_ERROR(parseBody(s->bodies[0], {"endfilter"}, end));
        KESTREL_RETURN_IF_ERROR(expectBlockEnd());
        return s;
    }

    // --- expressions ---------------------------------------------------------------------
    bool atTupleEnd() const {
        const Token& t = cur();
        if (t.type == TokenType::VariableEnd || t.type == TokenType::BlockEnd || t.type == TokenType::End) return true;
        if (t.type == TokenType::Operator && (t.text == ")" || t.text == "]" || t.text == "}")) return true;
        return t.type == TokenType::Name && (t.text == "if" || t.text == "recursive");
    }

    // A comma-separated list becomes a tuple; one expression stays itself.
    Result<ExprPtr> parseTuple(bool withCond) {
        const uint32_t offset = cur().offset;
        std::vector<ExprPtr> items;
        bool comma = false;
        while (true) {
            if (!items.empty()) {
                if (!skipOp(",")) break;
                comma = true;
                if (atTupleEnd()) break;
            }
            auto e = parseExpression(withCond);
            if (!e) return e;
            items.push_back(std::move(*e));
        }
        if (!comma && items.size() == 1) return std::move(items[0]);
        auto t = make(Expr::Kind::TupleLit, offset);
        t->args = std::move(items);
        KESTREL_RETURN_IF_ERROR(seal(*t));
        return t;
    }

    Result<ExprPtr> parseExpression(bool withCond) {
        DepthGuard g(depth_);
        if (depth_ > maxDepth_) return fail("expression nested deeper than " + std::to_string(maxDepth_) + " levels");
        auto e = parseOr();
        if (!e || !withCond) return e;
        ExprPtr expr = std::move(*e);
        while (isName("if")) {
            const uint32_t offset = cur().offset;
            next();
            auto cond = parseOr();
            if (!cond) return cond;
            auto c = make(Expr::Kind::Cond, offset);
            c->args.push_back(std::move(*cond));
            c->args.push_back(std::move(expr));
            if (skipName("else")) {
                auto other = parseExpression(true);
                if (!other) return other;
                c->args.push_back(std::move(*other));
            } else {
                c->args.push_back(nullptr);
            }
            KESTREL_RETURN_IF_ERROR(seal(*c));
            expr = std::move(c);
        }
        return expr;
    }

    Result<ExprPtr> parseBinaryChain(Expr::Kind kind, std::string_view word, Result<ExprPtr> (Parser::*sub)()) {
        auto left = (this->*sub)();
        if (!left) return left;
        ExprPtr expr = std::move(*left);
        while (isName(word)) {
            const uint32_t offset = cur().offset;
            next();
            auto right = (this->*sub)();
            if (!right) return right;
            auto b = make(kind, offset);
            b->args.push_back(std::move(expr));
            b->args.push_back(std::move(*right));
            KESTREL_RETURN_IF_ERROR(seal(*b));
            expr = std::move(b);
        }
        return expr;
    }

    Result<ExprPtr> parseOr() { return parseBinaryChain(Expr::Kind::Or, "or", &Parser::parseAnd); }
    Result<ExprPtr> parseAnd() { return parseBinaryChain(Expr::Kind::And, "and", &Parser::parseNot); }

    Result<ExprPtr> parseNot() {
        if (isName("not")) {
            DepthGuard g(depth_);
            if (depth_ > maxDepth_) return fail("expression nested too deeply");
            const uint32_t offset = cur().offset;
            next();
            auto inner = parseNot();
            if (!inner) return inner;
            auto n = make(Expr::Kind::Not, offset);
            n->args.push_back(std::move(*inner));
            KESTREL_RETURN_IF_ERROR(seal(*n));
            return n;
        }
        return parseCompare();
    }

    Result<ExprPtr> parseCompare() {
        const uint32_t offset = cur().offset;
        auto first = parseMath1();
        if (!first) return first;
        ExprPtr cmp;
        while (true) {
            std::string op;
            if (cur().type == TokenType::Operator &&
                (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == "<=" ||
                 cur().text == ">" || cur().text == ">=")) {
                op = cur().text;
                next();
            } else if (isName("in")) {
                op = "in";
                next();
            } else if (isName("not") && peek().type == TokenType::Name && peek().text == "in") {
                op = "notin";
                next();
                next();
            } else {
                break;
            }
            auto rhs = parseMath1();
            if (!rhs) return rhs;
            if (!cmp) {
                cmp = make(Expr::Kind::Compare, offset);
                cmp->args.push_back(std::move(*first));
            }
            cmp->ops.push_back(op);
            cmp->args.push_back(std::move(*rhs));
            KESTREL_RETURN_IF_ERROR(seal(*cmp));
        }
        if (cmp) return cmp;
        return first;
    }

    Result<ExprPtr> parseLeftAssoc(std::initializer_list<std::string_view> ops, Result<ExprPtr> (Parser::*sub)()) {
        auto left = (this->*sub)();
        if (!left) return left;
        ExprPtr expr = std::move(*left);
        while (cur().type == TokenType::Operator) {
            bool found = false;
            for (auto op : ops) found = found || cur().text == op;
            if (!found) break;
            auto b = make(Expr::Kind::Binary, cur().offset);
            b->name = cur().text;
            next();
            auto right = (this->*sub)();
            if (!right) return right;
            b->args.push_back(std::move(expr));
            b->args.push_back(std::move(*right));
            KESTREL_RETURN_IF_ERROR(seal(*b));
            expr = std::move(b);
        }
        return expr;
    }

    Result<ExprPtr> parseMath1() { return parseLeftAssoc({"+", "-"}, &Parser::parseConcat); }
    Result<ExprPtr> parseConcat() { return parseLeftAssoc({"~"}, &Parser::parseMath2); }
    Result<ExprPtr> parseMath2() { return parseLeftAssoc({"*", "/", "//", "%"}, &Parser::parsePow); }
    Result<ExprPtr> parsePow() { return parseLeftAssoc({"**"}, &Parser::parseUnaryWithFilter); }
    Result<ExprPtr> parseUnaryWithFilter() { return parseUnary(true); }

    Result<ExprPtr> parseUnary(bool withFilter) {
        DepthGuard g(depth_);
        if (depth_ > maxDepth_) return fail("expression nested deeper than " + std::to_string(maxDepth_) + " levels");
        ExprPtr node;
        if (isOp("-") || isOp("+")) {
            auto u = make(isOp("-") ? Expr::Kind::Neg : Expr::Kind::Pos, cur().offset);
            next();
            auto inner = parseUnary(false);
            if (!inner) return inner;
            u->args.push_back(std::move(*inner));
            KESTREL_RETURN_IF_ERROR(seal(*u));
            node = std::move(u);
        } else {
            auto p = parsePrimary();
            if (!p) return p;
            node = std::move(*p);
        }
        auto post = parsePostfix(std::move(node));
        if (!post || !withFilter) return post;
        return parseFilterExpr(std::move(*post));
    }

    Result<ExprPtr> parsePrimary() {
        const Token& t = cur();
        const uint32_t offset = t.offset;
        if (t.type == TokenType::Name) {
            auto e = make(Expr::Kind::Literal, offset);
            if (t.text == "true" || t.text == "True") e->literal = Value(true);
            else if (t.text == "false" || t.text == "False") e->literal = Value(false);
            else if (t.text == "none" || t.text == "None") e->literal = Value::none();
            else { e->kind = Expr::Kind::Name; e->name = t.text; }
            next();
            return e;
        }
        if (t.type == TokenType::String) {
            std::string s;
            while (cur().type == TokenType::String) { s += cur().text; next(); }
            auto e = make(Expr::Kind::Literal, offset);
            e->literal = Value(std::move(s));
            return e;
        }
        if (t.type == TokenType::Integer || t.type == TokenType::Float) {
            auto e = make(Expr::Kind::Literal, offset);
            e->literal = t.type == TokenType::Integer ? Value(t.intValue) : Value(t.floatValue);
            next();
            return e;
        }
        if (skipOp("(")) {
            if (skipOp(")")) return make(Expr::Kind::TupleLit, offset);
            auto inner = parseTuple(true);
            if (!inner) return inner;
            KESTREL_RETURN_IF_ERROR(expectOp(")"));
            return inner;
        }
        if (skipOp("[")) {
            auto list = make(Expr::Kind::ListLit, offset);
            while (!isOp("]")) {
                if (!list->args.empty()) KESTREL_RETURN_IF_ERROR(expectOp(","));
                if (isOp("]")) break;
                auto item = parseExpression(true);
                if (!item) return item;
                list->args.push_back(std::move(*item));
            }
            next();
            KESTREL_RETURN_IF_ERROR(seal(*list));
            return list;
        }
        if (skipOp("{")) {
            auto dict = make(Expr::Kind::DictLit, offset);
            while (!isOp("}")) {
                if (!dict->args.empty()) KESTREL_RETURN_IF_ERROR(expectOp(","));
                if (isOp("}")) break;
                auto key = parseExpression(true);
                if (!key) return key;
                KESTREL_RETURN_IF_ERROR(expectOp(":"));
                auto value = parseExpression(true);
                if (!value) return value;
                dict->args.push_back(std::move(*key));
                dict->args.push_back(std::move(*value));
            }
            next();
            KESTREL_RETURN_IF_ERROR(seal(*dict));
            return dict;
        }
        return fail("unexpected " + describe(t) + ", expected an expression");
    }

    Result<ExprPtr> parsePostfix(ExprPtr node) {
        while (true) {
            KESTREL_RETURN_IF_ERROR(seal(*node));
            if (isOp(".")) {
                const uint32_t offset = cur().offset;
                next();
                if (cur().type == TokenType::Integer) {
                    auto g = make(Expr::Kind::GetItem, offset);
                    auto idx = make(Expr::Kind::Literal, cur().offset);
                    idx->literal = Value(cur().intValue);
                    next();
                    g->args.push_back(std::move(node));
                    g->args.push_back(std::move(idx));
                    node = std::move(g);
                    continue;
                }
                auto name = expectName();
                if (!name) return name.status();
                auto g = make(Expr::Kind::GetAttr, offset);
                g->name = *name;
                g->args.push_back(std::move(node));
                node = std::move(g);
            } else if (isOp("[")) {
                auto sub = parseSubscript(std::move(node));
                if (!sub) return sub;
                node = std::move(*sub);
            } else if (isOp("(")) {
                auto call = parseCall(std::move(node));
                if (!call) return call;
                node = std::move(*call);
            } else {
                return node;
            }
        }
    }

    Result<ExprPtr> parseSubscript(ExprPtr node) {
        const uint32_t offset = cur().offset;
        next();  // [
        ExprPtr parts[3];
        int part = 0;
        bool slice = false;
        while (!isOp("]")) {
            if (isOp(":")) {
                if (++part > 2) return fail("too many ':' in a slice");
                slice = true;
                next();
                continue;
            }
            if (parts[part]) return fail("expected ']' or ':', found " + describe(cur()));
            auto e = parseTuple(true);
            if (!e) return e;
            parts[part] = std::move(*e);
        }
        next();
        if (!slice) {
            if (!parts[0]) return failAt(offset, "empty subscript");
            auto g = make(Expr::Kind::GetItem, offset);
            g->args.push_back(std::move(node));
            g->args.push_back(std::move(parts[0]));
            return g;
        }
        auto s = make(Expr::Kind::Slice, offset);
        s->args.push_back(std::move(node));
        for (auto& p : parts) s->args.push_back(std::move(p));
        return s;
    }

    Status parseCallArgs(Expr& e) {
        KESTREL_RETURN_IF_ERROR(expectOp("("));
        bool first = true;
        while (!isOp(")")) {
            if (!first) KESTREL_RETURN_IF_ERROR(expectOp(","));
            first = false;
            if (isOp(")")) break;
            if (cur().type == TokenType::Name && peek().type == TokenType::Operator && peek().text == "=") {
                std::string key = cur().text;
                next();
                next();
                auto v = parseExpression(true);
                if (!v) return v.status();
                e.kwargs.emplace_back(std::move(key), std::move(*v));
                continue;
            }
            if (isOp("*") || isOp("**")) return fail("*args and **kwargs in calls are not supported");
            if (!e.kwargs.empty()) return fail("positional argument after a keyword argument");
            auto v = parseExpression(true);
            if (!v) return v.status();
            e.args.push_back(std::move(*v));
        }
        next();
        return Status::ok();
    }

    Result<ExprPtr> parseCall(ExprPtr callee) {
        auto c = make(Expr::Kind::Call, cur().offset);
        c->args.push_back(std::move(callee));
        KESTREL_RETURN_IF_ERROR(parseCallArgs(*c));
        return c;
    }

    Result<std::string> parseDottedName() {
        auto n = expectName();
        if (!n) return n;
        std::string name = *n;
        while (isOp(".")) {
            next();
            auto part = expectName();
            if (!part) return part;
            name += "." + *part;
        }
        return name;
    }

    Result<ExprPtr> parseFilter(ExprPtr operand) {
        auto f = make(Expr::Kind::Filter, cur().offset);
        auto name = parseDottedName();
        if (!name) return name.status();
        f->name = *name;
        f->args.push_back(std::move(operand));
        if (isOp("(")) KESTREL_RETURN_IF_ERROR(parseCallArgs(*f));
        return f;
    }

    Result<ExprPtr> parseFilterExpr(ExprPtr node) {
        while (true) {
            KESTREL_RETURN_IF_ERROR(seal(*node));
            if (isOp("|")) {
                next();
                auto f = parseFilter(std::move(node));
                if (!f) return f;
                node = std::move(*f);
            } else if (isName("is")) {
                auto t = make(Expr::Kind::Test, cur().offset);
                next();
                t->negated = skipName("not");
                auto name = parseDottedName();
                if (!name) return name.status();
                t->name = *name;
                t->args.push_back(std::move(node));
                const Token& c = cur();
                const bool argStart = c.type == TokenType::String || c.type == TokenType::Integer ||
                                      c.type == TokenType::Float ||
                                      (c.type == TokenType::Name && c.text != "else" && c.text != "or" &&
                                       c.text != "and" && c.text != "is" && c.text != "if") ||
                                      (c.type == TokenType::Operator && (c.text == "[" || c.text == "{"));
                if (isOp("(")) {
                    KESTREL_RETURN_IF_ERROR(parseCallArgs(*t));
                } else if (argStart) {
                    auto arg = parsePrimary();
                    if (!arg) return arg;
                    auto post = parsePostfix(std::move(*arg));
                    if (!post) return post;
                    t->args.push_back(std::move(*post));
                }
                node = std::move(t);
            } else if (isOp("(")) {
                auto call = parseCall(std::move(node));
                if (!call) return call;
                node = std::move(*call);
            } else {
                return node;
            }
        }
    }

    const LexedTemplate& t_;
    const std::vector<Token>& toks_;
    int maxDepth_;
    size_t pos_ = 0;
    int depth_ = 0;
    int loopDepth_ = 0;
};

}  // namespace

Result<Body> parseTemplate(const LexedTemplate& lexed, int maxDepth) { return Parser(lexed, maxDepth).parseRoot(); }

}  // namespace kestrel::jinja
