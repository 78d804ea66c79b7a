// The syntax tree of a parsed template. Built once by parser.cpp, then only
// read by the interpreter (so one parsed template may render on many threads).
#pragma once

#include "template/value.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kestrel::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
    enum class Kind {
        Literal,   // literal
        Name,      // name
        ListLit,   // args
        TupleLit,  // args
        DictLit,   // args: key0, value0, key1, value1 ...
        GetAttr,   // args[0] . name
        GetItem,   // args[0] [ args[1] ]
        Slice,     // args[0] [ args[1] : args[2] : args[3] ] (null = omitted)
        Call,      // args[0] ( args[1..], kwargs )
        Filter,    // args[0] | name ( args[1..], kwargs )
        Test,      // args[0] is [not] name ( args[1..] )
        Neg, Pos, Not,  // args[0]
        Binary,    // args[0] name args[1]: + - * / // % ** ~
        And, Or,   // args[0], args[1]
        Compare,   // args[0] ops[0] args[1] ops[1] args[2] ...
        Cond,      // args[1] if args[0] else args[2] (args[2] null: undefined)
    };
    Kind kind;
    uint32_t offset = 0;
    std::string name;
    Value literal;
    std::vector<ExprPtr> args;
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    std::vector<std::string> ops;
    bool negated = false;
    int height = 1;  // longest path to a leaf; the parser bounds it so evaluation and destruction stay shallow
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

struct MacroDef {
    std::string name;
    std::vector<std::string> params;
    std::vector<ExprPtr> defaults;  // aligned with params; null where there is none
    Body body;
};

struct Stmt {
    enum class Kind {
        Data,        // text
        Output,      // exprs[0]
        If,          // exprs = conditions; bodies[i] per condition, bodies.back() = else when bodies > exprs
        For,         // targets in exprs[0] [if exprs[1]]: bodies[0], else bodies[1]
        Set,         // targets (or attrTarget) = exprs[0]
        SetBlock,    // targets[0] = render(bodies[0]) | filters
        Macro,       // macro
        CallBlock,   // exprs[0] is the Call; macro holds caller params and body
        FilterBlock, // filters applied to render(bodies[0])
        Break,
        Continue,
        Scope,       // bodies[0] rendered as is ({% generation %})
    };
    Kind kind;
    uint32_t offset = 0;
    std::string text;
    std::vector<ExprPtr> exprs;
    std::vector<Body> bodies;
    std::vector<std::string> targets;
    std::string attrTarget;       // Set: `ns.attr`, targets[0] = ns
    std::vector<ExprPtr> filters; // Filter exprs with a null operand (args[0])
    std::shared_ptr<MacroDef> macro;
};

}  // namespace kestrel::jinja
