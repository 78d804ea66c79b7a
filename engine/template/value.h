// The value model of the Jinja interpreter: Python's objects as jinja2 sees them.
//
// A Value is one of undefined, none, bool, int, float, string, list (or tuple),
// dict (insertion-ordered, keys are Values), namespace, or callable (macro,
// builtin function, bound method). Lists and dicts are immutable once built
// (the sandbox forbids mutation), so copies share them through shared_ptr;
// a namespace is the one mutable object and is shared by reference on purpose,
// as `{% set ns.x = ... %}` must be seen through every copy.
//
// Strings are UTF-8; length, indexing and slicing count code points as Python does.
// Ints are 64-bit (Python's are unbounded): an overflow is an error, never a wrap.
//
// Thread-safety: Values may be read from several threads; namespaces must not
// be written concurrently (a render owns the namespaces it creates).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kestrel::jinja {

class Value;
struct Callable;
struct LoopState;

using List = std::vector<Value>;

// Insertion-ordered mapping, as Python's dict. Small dicts dominate (messages,
// tool schemas), so lookup is a linear scan over the entries.
class Dict {
public:
    const Value* find(const Value& key) const;
    const Value* get(std::string_view key) const;  // a string key
    void set(Value key, Value value);  // replaces an existing key in place
    const std::vector<std::pair<Value, Value>>& entries() const { return entries_; }
    size_t size() const { return entries_.size(); }

private:
    std::vector<std::pair<Value, Value>> entries_;
};

class Value {
public:
    enum class Kind : uint8_t { Undefined, None, Bool, Int, Float, String, List, Dict, Namespace, Callable, Loop };

    Value() = default;  // undefined
    static Value none() { Value v; v.kind_ = Kind::None; return v; }
    static Value undefined(std::string hint = {});
    Value(bool b) : kind_(Kind::Bool), int_(b ? 1 : 0) {}  // NOLINT
    Value(int i) : kind_(Kind::Int), int_(i) {}  // NOLINT
    Value(int64_t i) : kind_(Kind::Int), int_(i) {}  // NOLINT
    Value(double d) : kind_(Kind::Float), float_(d) {}  // NOLINT
    Value(std::string s);  // NOLINT
    Value(std::string_view s) : Value(std::string(s)) {}  // NOLINT
    Value(const char* s) : Value(std::string(s)) {}  // NOLINT
    Value(List items, bool tuple = false);  // NOLINT
    Value(std::shared_ptr<const Dict> dict);  // NOLINT
    Value(Dict dict) : Value(std::make_shared<const Dict>(std::move(dict))) {}  // NOLINT
    static Value makeNamespace(std::shared_ptr<Dict> attributes);
    static Value makeCallable(std::shared_ptr<const Callable> callable);
    // The `loop` object of a for loop; like jinja2's LoopContext it is one object updated in place.
    static Value makeLoop(std::shared_ptr<LoopState> state);

    Kind kind() const { return kind_; }
    bool isUndefined() const { return kind_ == Kind::Undefined; }
    bool isNone() const { return kind_ == Kind::None; }
    bool isBool() const { return kind_ == Kind::Bool; }
    bool isInt() const { return kind_ == Kind::Int; }  // not bool
    bool isFloat() const { return kind_ == Kind::Float; }
    bool isNumber() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool; }
    bool isString() const { return kind_ == Kind::String; }
    bool isList() const { return kind_ == Kind::List; }
    bool isTuple() const { return kind_ == Kind::List && tuple_; }
    bool isDict() const { return kind_ == Kind::Dict; }
    bool isNamespace() const { return kind_ == Kind::Namespace; }
    bool isCallable() const { return kind_ == Kind::Callable; }
    bool isLoop() const { return kind_ == Kind::Loop; }

    bool asBool() const { return int_ != 0; }
    int64_t asInt() const;  // bool -> 0/1; a float truncates (saturating)
    double asFloat() const { return kind_ == Kind::Float ? float_ : static_cast<double>(int_); }
    const std::string& asString() const { return *static_cast<const std::string*>(ptr_.get()); }
    const List& asList() const { return *static_cast<const List*>(ptr_.get()); }
    std::shared_ptr<const List> sharedList() const { return std::static_pointer_cast<const List>(ptr_); }
    const Dict& asDict() const { return *static_cast<const Dict*>(ptr_.get()); }
    Dict& namespaceAttributes() const { return *const_cast<Dict*>(static_cast<const Dict*>(ptr_.get())); }
    const Callable& asCallable() const { return *static_cast<const Callable*>(ptr_.get()); }
    LoopState& asLoop() const { return *const_cast<LoopState*>(static_cast<const LoopState*>(ptr_.get())); }
    // For undefined values: what was looked up, for the error message when it is used.
    const std::string& undefinedHint() const;

    // Nesting of lists and dicts (0 for scalars); bounds recursion in repr, ==, tojson.
    int depth() const { return depth_; }
    // Whether a namespace is this value or inside it.
    bool holdsNamespace() const { return holdsNamespace_; }

    // Python truthiness.
    bool truthy() const;
    // Python ==, with jinja2's Undefined (equal only to another undefined).
    bool equals(const Value& other) const;
    // The type name Python would print in an error ("str", "dict", "int" ...).
    const char* typeName() const;

private:
    Kind kind_ = Kind::Undefined;
    bool tuple_ = false;
    bool holdsNamespace_ = false;
    uint16_t depth_ = 0;
    union {
        int64_t int_ = 0;
        double float_;
    };
    // The string (also an undefined value's hint), List, Dict, Callable or LoopState.
    std::shared_ptr<const void> ptr_;
};

struct LoopState {
    std::shared_ptr<const List> items;
    int64_t index0 = 0;
};

// str(value) as jinja2 prints it: Python's str(), "" for undefined.
std::string toPythonStr(const Value& v);
// repr(value): quotes strings the way Python does ('...' unless it holds ' and no ").
std::string toPythonRepr(const Value& v);
void appendPythonRepr(std::string& out, const Value& v);
// Python's repr of a float: shortest round-trip digits, 1e+16 / 1e-05 switch points.
std::string formatPythonFloat(double d);

}  // namespace kestrel::jinja
