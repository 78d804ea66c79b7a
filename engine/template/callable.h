// Callable values: macros, builtin functions (range, namespace, raise_exception ...)
// and methods bound to their object (`s.startswith`, `d.items`, `loop.cycle`).
#pragma once

#include "kestrel/status.h"
#include "template/ast.h"
#include "template/value.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kestrel::jinja {

class Interpreter;

struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keyword;

    const Value* kwarg(std::string_view name) const {
        for (const auto& [k, v] : keyword)
            if (k == name) return &v;
        return nullptr;
    }
    // Positional index i, else keyword `name`, else nullptr.
    const Value* get(size_t i, std::string_view name) const {
        if (i < positional.size()) return &positional[i];
        return kwarg(name);
    }
};

using BuiltinFn = Result<Value> (*)(Interpreter&, const Value& self, const CallArgs&);

struct Callable {
    enum class Kind { Builtin, Macro, Unsafe };
    Kind kind = Kind::Builtin;
    std::string name;
    Value self;                       // the bound object of a method
    BuiltinFn builtin = nullptr;
    std::shared_ptr<MacroDef> macro;  // Kind::Macro
    Value caller;                     // a call block's body, passed to the macro as `caller`
};

}  // namespace kestrel::jinja
