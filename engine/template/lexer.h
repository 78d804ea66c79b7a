// Tokens of a Jinja template, split the way jinja2's lexer splits them with
// trim_blocks and lstrip_blocks on (the configuration transformers uses):
//  - line endings become "\n" and one trailing newline of the source is dropped
//    (keep_trailing_newline is off);
//  - `{%- ` / `{#-` / `{{-` strip all whitespace before the tag, `-%}` / `-#}` / `-}}` after;
//  - trim_blocks drops the first "\n" after `%}` and `#}` (not after `}}`);
//  - lstrip_blocks drops spaces and tabs between a line start and `{%` / `{#`
//    unless the tag is written `{%+`;
//  - `{% raw %}...{% endraw %}` is data.
#pragma once

#include "kestrel/status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kestrel::jinja {

enum class TokenType : uint8_t {
    Data,           // literal template text
    VariableBegin,  // {{
    VariableEnd,    // }}
    BlockBegin,     // {%
    BlockEnd,       // %}
    Name,
    String,         // text holds the decoded value
    Integer,
    Float,
    Operator,       // text holds the operator: + - * / // % ** ~ == != < <= > >= = . , : | ( ) [ ] { }
    End,
};

struct Token {
    TokenType type;
    std::string text;
    int64_t intValue = 0;
    double floatValue = 0;
    uint32_t offset = 0;  // byte offset in the normalised source, for line:column
};

struct LexedTemplate {
    std::string source;  // after newline normalisation; offsets point here
    std::vector<Token> tokens;
    // "LINE:COLUMN" of an offset (1-based, columns in bytes).
    std::string position(uint32_t offset) const;
};

Result<LexedTemplate> lexTemplate(std::string_view source);

}  // namespace kestrel::jinja
