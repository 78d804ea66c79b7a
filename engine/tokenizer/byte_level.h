// GPT-2 byte-level encoding and UTF-8 helpers shared by the tokenizers.
//
// Byte-level BPE vocabularies store every byte as a printable code point
// (0x20 ' ' -> U+0120 'Ġ', 0x0A -> U+010A 'Ċ', printable ASCII and most of
// Latin-1 map to themselves) so that merges can be written as text. These
// functions convert between raw bytes and that alphabet.
//
// Thread-safety: all functions are pure; the tables are built once, at first
// use, thread-safely (function-local statics).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kestrel::tokenizer {

// The UTF-8 encoding of the code point that stands for `byte`.
std::string_view byteToUnicodeUtf8(uint8_t byte);

// Raw bytes -> byte-level text ("a b" -> "aĠb"), appended to `out`.
void appendByteLevel(std::string_view raw, std::string& out);

// Byte-level text -> raw bytes, appended to `out`. Code points outside the
// byte-level alphabet (not produced by appendByteLevel) are copied as their
// own UTF-8 bytes, so a malformed vocabulary entry degrades rather than vanishes.
void appendRawFromByteLevel(std::string_view byteLevel, std::string& out);

// The byte a code point stands for, if it is in the byte-level alphabet.
std::optional<uint8_t> unicodeToByte(uint32_t codePoint);

// Appends the UTF-8 encoding of `codePoint` (must be <= 0x10FFFF).
void appendUtf8(uint32_t codePoint, std::string& out);

// Decodes the first code point of `text` if it is well-formed UTF-8; sets
// `length` to the bytes it takes. Returns nullopt (length = bytes of the
// maximal ill-formed subpart, at least 1) otherwise; `incomplete` tells
// whether the bytes are a valid but truncated prefix of a character.
std::optional<uint32_t> decodeUtf8(std::string_view text, size_t& length, bool* incomplete = nullptr);

// Appends the well-formed UTF-8 in `bytes` to `out`, each ill-formed subpart
// replaced with U+FFFD. With `final` false, a truncated character at the very
// end is left unconsumed (it may be completed by later bytes). Returns the
// number of bytes consumed.
size_t appendValidUtf8(std::string_view bytes, std::string& out, bool final);

bool isValidUtf8(std::string_view bytes);

}  // namespace kestrel::tokenizer
