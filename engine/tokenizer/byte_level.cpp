#include "byte_level.h"

#include <array>

namespace kestrel::tokenizer {
namespace {

// GPT-2's choice: bytes that are printable (and not a space) keep their own
// code point; the other 68 are given U+0100, U+0101, ... in byte order.
struct ByteLevelTables {
    std::array<uint32_t, 256> byteToCode{};
    std::array<std::string, 256> byteToUtf8;
    std::array<int16_t, 0x200> codeToByte{};  // every byte-level code point is < 0x200

    ByteLevelTables() {
        codeToByte.fill(-1);
        auto keeps = [](int b) {
            return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        };
        uint32_t next = 0x100;
        for (int b = 0; b < 256; ++b) {
            const uint32_t code = keeps(b) ? uint32_t(b) : next++;
            byteToCode[b] = code;
            appendUtf8(code, byteToUtf8[b]);
            codeToByte[code] = int16_t(b);
        }
    }
};

const ByteLevelTables& tables() {
    static const ByteLevelTables t;
    return t;
}

bool isContinuation(uint8_t c) { return (c & 0xC0) == 0x80; }

}  // namespace

std::string_view byteToUnicodeUtf8(uint8_t byte) { return tables().byteToUtf8[byte]; }

void appendByteLevel(std::string_view raw, std::string& out) {
    const auto& t = tables();
    for (unsigned char c : raw) out += t.byteToUtf8[c];
}

std::optional<uint8_t> unicodeToByte(uint32_t codePoint) {
    const auto& t = tables();
    if (codePoint >= t.codeToByte.size() || t.codeToByte[codePoint] < 0) return std::nullopt;
    return uint8_t(t.codeToByte[codePoint]);
}

void appendRawFromByteLevel(std::string_view byteLevel, std::string& out) {
    size_t pos = 0;
    while (pos < byteLevel.size()) {
        size_t len = 0;
        const auto code = decodeUtf8(byteLevel.substr(pos), len);
        if (code) {
            if (const auto b = unicodeToByte(*code)) out += char(*b);
            else out.append(byteLevel.substr(pos, len));
        } else {
            out.append(byteLevel.substr(pos, len));
        }
        pos += len;
    }
}

void appendUtf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

std::optional<uint32_t> decodeUtf8(std::string_view text, size_t& length, bool* incomplete) {
    if (incomplete) *incomplete = false;
    length = 1;
    if (text.empty()) return std::nullopt;
    const auto* s = reinterpret_cast<const uint8_t*>(text.data());
    const uint8_t c0 = s[0];
    if (c0 < 0x80) return c0;
    int need = 0;
    uint32_t cp = 0;
    // The allowed range of the second byte excludes overlongs, surrogates and > U+10FFFF.
    uint8_t lo = 0x80, hi = 0xBF;
    if (c0 >= 0xC2 && c0 <= 0xDF) { need = 1; cp = c0 & 0x1F; }
    else if (c0 >= 0xE0 && c0 <= 0xEF) {
        need = 2; cp = c0 & 0x0F;
        if (c0 == 0xE0) lo = 0xA0;
        if (c0 == 0xED) hi = 0x9F;
    } else if (c0 >= 0xF0 && c0 <= 0xF4) {
        need = 3; cp = c0 & 0x07;
        if (c0 == 0xF0) lo = 0x90;
        if (c0 == 0xF4) hi = 0x8F;
    } else {
        return std::nullopt;  // a lone continuation byte, C0, C1 or F5..FF
    }
    for (int i = 1; i <= need; ++i) {
        if (size_t(i) >= text.size()) {
            length = size_t(i);
            if (incomplete) *incomplete = true;
            return std::nullopt;
        }
        const uint8_t c = s[i];
        const bool ok = (i == 1) ? (c >= lo && c <= hi) : isContinuation(c);
        if (!ok) {
            length = size_t(i);
            return std::nullopt;
        }
        cp = (cp << 6) | (c & 0x3F);
    }
    length = size_t(need) + 1;
    return cp;
}

size_t appendValidUtf8(std::string_view bytes, std::string& out, bool final) {
    size_t pos = 0;
    while (pos < bytes.size()) {
        // ASCII runs are the common case; copy them without decoding.
        size_t run = pos;
        while (run < bytes.size() && uint8_t(bytes[run]) < 0x80) ++run;
        if (run > pos) {
            out.append(bytes.substr(pos, run - pos));
            pos = run;
            continue;
        }
        size_t len = 0;
        bool incomplete = false;
        if (decodeUtf8(bytes.substr(pos), len, &incomplete)) {
            out.append(bytes.substr(pos, len));
        } else {
            if (incomplete && !final) return pos;
            out += "\xEF\xBF\xBD";
        }
        pos += len;
    }
    return pos;
}

bool isValidUtf8(std::string_view bytes) {
    size_t pos = 0;
    while (pos < bytes.size()) {
        size_t len = 0;
        if (!decodeUtf8(bytes.substr(pos), len)) return false;
        pos += len;
    }
    return true;
}

}  // namespace kestrel::tokenizer
