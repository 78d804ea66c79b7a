// Text that has broken chat exporters and importers elsewhere: markup,
// quotes, every C0 control character, bidi overrides, emoji sequences, CJK.
#pragma once

#include <QString>

namespace kestrel::store::test {

inline QString allControlChars() {
    QString s;
    for (ushort c = 0; c < 0x20; ++c) s += QChar(c);
    return s + QChar(0x7f);
}

inline QString hostileText() {
    return QStringLiteral("<script>alert('x')</script><img src=x onerror=\"alert(1)\"> & &amp; </div></details>"
                          " \"double\" 'single' `back` ${x} {{y}} %1 %2 \\ \\n")
           + allControlChars()
           + QString::fromUtf16(u" \u202Eevil\u202C \u200F\u200Eאבג عربي \uFEFF 🙂 👩‍👩‍👧‍👦 🏳️‍🌈 中文测试 ")
           + QStringLiteral("\n```\ncode block\n```\n");
}

}  // namespace kestrel::store::test
