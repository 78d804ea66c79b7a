#include "sentencepiece_proto.h"

#include <cstring>

namespace kestrel::tokenizer {
namespace {

enum WireType : uint32_t { Varint = 0, Fixed32 = 5, LengthDelimited = 2 };

void putVarint(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out.push_back(char(uint8_t(v) | 0x80));
        v >>= 7;
    }
    out.push_back(char(uint8_t(v)));
}

void putTag(std::string& out, uint32_t field, WireType wire) { putVarint(out, (uint64_t(field) << 3) | wire); }

// int32 and enum fields: a negative value is sign-extended to 64 bits (ten
// bytes), as protobuf encodes it.
void putInt32(std::string& out, uint32_t field, int32_t v) {
    putTag(out, field, Varint);
    putVarint(out, uint64_t(int64_t(v)));
}

void putBool(std::string& out, uint32_t field, bool v) {
    putTag(out, field, Varint);
    putVarint(out, v ? 1 : 0);
}

void putFloat(std::string& out, uint32_t field, float v) {
    putTag(out, field, Fixed32);
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 4; ++i) out.push_back(char(uint8_t(bits >> (8 * i))));  // little-endian
}

void putBytes(std::string& out, uint32_t field, const std::string& bytes) {
    putTag(out, field, LengthDelimited);
    putVarint(out, bytes.size());
    out += bytes;
}

}  // namespace

std::string serializeModelProto(const SpmModelSpec& spec) {
    std::string out, message;
    size_t total = 0;
    for (const SpmPiece& p : spec.pieces) total += p.piece.size() + 16;
    out.reserve(total + 256);

    for (const SpmPiece& p : spec.pieces) {
        message.clear();
        putBytes(message, 1, p.piece);
        putFloat(message, 2, p.score);
        putInt32(message, 3, int32_t(p.type));
        putBytes(out, 1, message);
    }

    message.clear();
    putInt32(message, 3, int32_t(spec.modelType));
    putInt32(message, 4, int32_t(spec.pieces.size()));
    putBool(message, 35, spec.byteFallback);
    putInt32(message, 40, spec.unkId);
    putInt32(message, 41, spec.bosId);
    putInt32(message, 42, spec.eosId);
    putInt32(message, 43, spec.padId);
    putBytes(out, 2, message);

    message.clear();
    putBytes(message, 1, spec.normalizerName);
    if (!spec.precompiledCharsmap.empty()) putBytes(message, 2, spec.precompiledCharsmap);
    putBool(message, 3, spec.addDummyPrefix);
    putBool(message, 4, spec.removeExtraWhitespaces);
    putBool(message, 5, spec.escapeWhitespaces);
    putBytes(out, 3, message);
    return out;
}

}  // namespace kestrel::tokenizer
