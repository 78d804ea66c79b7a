// What tst_store_crash_child writes, shared with the parent so both build the
// same text: piece i of the reply, deterministic and multi-byte.
#pragma once

#include <QString>

namespace kestrel::store::test {

inline QString crashPiece(int i, int pieceChars) {
    QString piece = QStringLiteral("[%1 ü中🙂]").arg(i, 6, 10, QLatin1Char('0'));
    while (piece.size() < pieceChars) piece += QLatin1Char('a' + (i + piece.size()) % 26);
    return piece;
}

}  // namespace kestrel::store::test
