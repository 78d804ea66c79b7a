// JSON <-> Value for chat templates: conversations and tool schemas arrive as
// JSON; the `tojson` filter writes JSON the way transformers' override does
// (json.dumps with ensure_ascii=False; indent and separators as arguments).
//
// The parser is strict RFC 8259 (no comments, no trailing commas), bounded in
// nesting depth, and reports line:column. Objects keep their key order, as
// Python's json module does; a repeated key keeps its first position and last value.
#pragma once

#include "kestrel/status.h"
#include "template/value.h"

#include <optional>
#include <string>
#include <string_view>

namespace kestrel::jinja {

Result<Value> parseJson(std::string_view text, int maxDepth = 256);

struct JsonDumpOptions {
    std::optional<std::string> indent;  // none: one line; else the indent unit ("  ", "\t" ...)
    std::string itemSeparator = ", ";   // json.dumps: ", " without indent, "," with it
    std::string keySeparator = ": ";
    bool sortKeys = false;
    bool ensureAscii = false;
};

// Fails on values JSON cannot hold (undefined, callables, namespaces), with
// Python's message "Object of type X is not JSON serializable".
Result<std::string> dumpJson(const Value& v, const JsonDumpOptions& options = {});

}  // namespace kestrel::jinja
