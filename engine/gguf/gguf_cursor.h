// A read cursor over a byte range that can never step outside it.
//
// Internal to engine/gguf. Every read first checks the bytes left, so the
// parser can treat each failed read as "the file ends here" and report it;
// nothing is read or allocated on the strength of an unchecked length.
// Little-endian hosts only (GGUF is little-endian; so is every target we build).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace kestrel::gguf {

class Cursor {
public:
    Cursor(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}

    uint64_t pos() const { return pos_; }
    uint64_t size() const { return size_; }
    uint64_t left() const { return size_ - pos_; }

    template <typename T>
    bool read(T& out) {
        static_assert(std::is_trivially_copyable_v<T>);
        if (left() < sizeof(T)) return false;
        std::memcpy(&out, data_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return true;
    }

    // A view of the next n bytes; false (and nothing consumed) if fewer are left.
    bool take(uint64_t n, std::string_view& out) {
        if (left() < n) return false;
        out = std::string_view(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(n));
        pos_ += n;
        return true;
    }

private:
    const uint8_t* data_;
    uint64_t size_;
    uint64_t pos_ = 0;
};

}  // namespace kestrel::gguf
