// Tokens -> syntax tree, with jinja2's grammar and operator precedence:
//   cond-expr < or < and < not < comparisons/in < + - < ~ < * / // % < ** < unary -
//   < postfix (.attr [index] (call)) < filters and tests.
// Nesting (expressions and blocks) is bounded by maxDepth, so a hostile template
// gets an error, not a stack overflow.
#pragma once

#include "kestrel/status.h"
#include "template/ast.h"
#include "template/lexer.h"

namespace kestrel::jinja {

Result<Body> parseTemplate(const LexedTemplate& lexed, int maxDepth);

}  // namespace kestrel::jinja
