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
    enum class Kind : uint8_t { Undefined, None, Bool, Int, Float, String, List, Dict, Namespace, Callable };

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

    bool asBool() const { return int_ != 0; }
    int64_t asInt() const { return kind_ == Kind::Float ? static_cast<int64_t>(float_) : int_; }  // bool -> 0/1
    double asFloat() const { return kind_ == Kind::Float ? float_ : static_cast<double>(int_); }
    const std::string& asString() const { return *string_; }
    const List& asList() const { return *list_; }
    const Dict& asDict() const { return *dict_; }
    Dict& namespaceAttributes() const { return *ns_; }
    const Callable& asCallable() const { return *callable_; }
    // For undefined values: what was looked up, for the error message when it is used.
    const std::string& undefinedHint() const;

    // Python truthiness.
    bool truthy() const;
    // Python ==, with jinja2's Undefined (equal only to another undefined).
    bool equals(const Value& other) const;
    // The type name Python would print in an error ("str", "dict", "int" ...).
    const char* typeName() const;

private:
    Kind kind_ = Kind::Undefined;
    bool tuple_ = false;
    int64_t int_ = 0;
    double float_ = 0;
    std::shared_ptr<const std::string> string_;  // also the undefined hint
    std::shared_ptr<const List> list_;
    std::shared_ptr<const Dict> dict_;
    std::shared_ptr<Dict> ns_;
    std::shared_ptr<const Callable> callable_;
};

// str(value) as jinja2 prints it: Python's str(), "" for undefined.
std::string toPythonStr(const Value& v);
// repr(value): quotes strings the way Python does ('...' unless it holds ' and no ").
std::string toPythonRepr(const Value& v);
void appendPythonRepr(std::string& out, const Value& v);
// Python's repr of a float: shortest round-trip digits, 1e+16 / 1e-05 switch points.
std::string formatPythonFloat(double d);

}  // namespace kestrel::jinja
