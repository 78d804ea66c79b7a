// Python's two string-formatting forms that templates use: `'%s and %d' % (a, n)` and
// `'{} {name}'.format(a, name=b)`. Only the common conversions are implemented
// (%s %r %d %i %f %% with width, precision and '-' / '0' flags; format fields without a
// format spec); anything else is an error, never a silent difference.
#include "template/string_format.h"

#include "template/utf8_text.h"

#include <cstdio>
#include <string>

namespace kestrel::jinja {

namespace {

Result<std::string> convertOne(char conv, const Value& v, bool leftAlign, bool zeroPad, int width, int precision) {
    std::string body;
    switch (conv) {
        case 's': body = toPythonStr(v); break;
        case 'r': body = toPythonRepr(v); break;
        case 'd':
        case 'i':
            if (!v.isNumber()) return Status(ErrorCode::InvalidArgument, std::string("%d format: a real number is required, not ") + v.typeName());
            body = std::to_string(v.asInt());
            break;
        case 'f': {
            if (!v.isNumber()) return Status(ErrorCode::InvalidArgument, std::string("%f format: a real number is required, not ") + v.typeName());
            char buf[512];
            std::snprintf(buf, sizeof buf, "%.*f", precision < 0 ? 6 : std::min(precision, 100), v.asFloat());
            body = buf;
            break;
        }
        default:
            return Status(ErrorCode::Unsupported, std::string("unsupported format character '") + conv + "'");
    }
    if (precision >= 0 && (conv == 's' || conv == 'r')) {
        const auto cps = utf8::decode(body);
        if (cps.size() > static_cast<size_t>(precision)) body = utf8::encode(cps, 0, static_cast<size_t>(precision));
    }
    const auto len = static_cast<int>(utf8::length(body));
    if (width > len) {
        const std::string pad(static_cast<size_t>(width - len), zeroPad && !leftAlign && conv != 's' && conv != 'r' ? '0' : ' ');
        if (leftAlign) body += pad;
        else if (pad[0] == '0' && !body.empty() && body[0] == '-') body = "-" + pad + body.substr(1);
        else body = pad + body;
    }
    return body;
}

}  // namespace

Result<std::string> percentFormat(const std::string& fmt, const Value& args) {
    std::string out;
    size_t next = 0;
    const bool tuple = args.isTuple();
    const size_t count = tuple ? args.asList().size() : 1;
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%') { out += fmt[i]; continue; }
        if (++i >= fmt.size()) return Status(ErrorCode::InvalidArgument, "incomplete format");
        if (fmt[i] == '%') { out += '%'; continue; }
        const Value* value = nullptr;
        Value keyed;
        if (fmt[i] == '(') {
            const size_t close = fmt.find(')', i);
            if (close == std::string::npos || !args.isDict()) return Status(ErrorCode::InvalidArgument, "format requires a mapping");
            const Value* v = args.asDict().get(fmt.substr(i + 1, close - i - 1));
            if (!v) return Status(ErrorCode::InvalidArgument, "format key " + fmt.substr(i + 1, close - i - 1) + " is missing");
            keyed = *v;
            value = &keyed;
            i = close + 1;
        }
        bool leftAlign = false, zeroPad = false;
        while (i < fmt.size() && (fmt[i] == '-' || fmt[i] == '0' || fmt[i] == ' ' || fmt[i] == '+')) {
            leftAlign = leftAlign || fmt[i] == '-';
            zeroPad = zeroPad || fmt[i] == '0';
            ++i;
        }
        int width = 0, precision = -1;
        while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') width = std::min(width * 10 + (fmt[i++] - '0'), 1 << 20);
        if (i < fmt.size() && fmt[i] == '.') {
            precision = 0;
            ++i;
            while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') precision = std::min(precision * 10 + (fmt[i++] - '0'), 1 << 20);
        }
        if (i >= fmt.size()) return Status(ErrorCode::InvalidArgument, "incomplete format");
        if (!value) {
            if (next >= count) return Status(ErrorCode::InvalidArgument, "not enough arguments for format string");
            value = tuple ? &args.asList()[next] : &args;
            ++next;
        }
        auto piece = convertOne(fmt[i], *value, leftAlign, zeroPad, width, precision);
        if (!piece) return piece;
        out += *piece;
    }
    if (next < count && !args.isDict()) return Status(ErrorCode::InvalidArgument, "not all arguments converted during string formatting");
    return out;
}

Result<std::string> braceFormat(const std::string& fmt, const std::vector<Value>& positional,
                                const std::vector<std::pair<std::string, Value>>& keyword) {
    std::string out;
    size_t autoIndex = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
        const char c = fmt[i];
        if (c == '}') {
            if (i + 1 < fmt.size() && fmt[i + 1] == '}') { out += '}'; ++i; continue; }
            return Status(ErrorCode::InvalidArgument, "Single '}' encountered in format string");
        }
        if (c != '{') { out += c; continue; }
        if (i + 1 < fmt.size() && fmt[i + 1] == '{') { out += '{'; ++i; continue; }
        const size_t close = fmt.find('}', i);
        if (close == std::string::npos) return Status(ErrorCode::InvalidArgument, "Single '{' encountered in format string");
        const std::string field = fmt.substr(i + 1, close - i - 1);
        if (field.find_first_of(":!.[") != std::string::npos)
            return Status(ErrorCode::Unsupported, "format fields with a spec, conversion or attribute are not supported: {" + field + "}");
        const Value* v = nullptr;
        if (field.empty()) {
            if (autoIndex >= positional.size()) return Status(ErrorCode::InvalidArgument, "Replacement index out of range");
            v = &positional[autoIndex++];
        } else if (field.find_first_not_of("0123456789") == std::string::npos) {
            const size_t idx = std::stoul(field.substr(0, 9));
            if (idx >= positional.size()) return Status(ErrorCode::InvalidArgument, "Replacement index out of range");
            v = &positional[idx];
        } else {
            for (const auto& [k, val] : keyword)
                if (k == field) v = &val;
            if (!v) return Status(ErrorCode::InvalidArgument, "format key '" + field + "' is missing");
        }
        out += toPythonStr(*v);
        i = close;
    }
    return out;
}

}  // namespace kestrel::jinja
