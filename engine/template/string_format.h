// Python's `%` operator on strings and str.format, the subset templates use (see the .cpp).
#pragma once

#include "kestrel/status.h"
#include "template/value.h"

#include <string>
#include <utility>
#include <vector>

namespace kestrel::jinja {

// fmt % args: a tuple gives the positional arguments, a dict the %(name)s ones, anything else one.
Result<std::string> percentFormat(const std::string& fmt, const Value& args);
// fmt.format(*positional, **keyword).
Result<std::string> braceFormat(const std::string& fmt, const std::vector<Value>& positional,
                                const std::vector<std::pair<std::string, Value>>& keyword);

}  // namespace kestrel::jinja
