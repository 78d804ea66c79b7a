// Errors as values for the conversation store, the exporters and the importer.
//
// Nothing in app/store throws or aborts: every SQL, file or format failure comes
// back as a StoreError whose message a user can act on ("the database
// /home/u/.local/share/Kestrel/kestrel.sqlite is read-only: ..."). The store is
// a Qt layer, so messages are QStrings ready for the UI.
#pragma once

#include <QString>

#include <utility>
#include <variant>

namespace kestrel::store {

class [[nodiscard]] StoreError {
public:
    enum class Code {
        Ok = 0,
        InvalidArgument,  // an id that does not exist, an empty title, a wrong state
        NotFound,         // a conversation or message that is not (or no longer) there
        ReadOnly,         // the database file or its folder cannot be written
        DiskFull,         // SQLITE_FULL or a short write
        Corrupt,          // the database file is damaged or not a database
        Busy,             // another process holds a lock longer than the busy timeout
        Io,               // any other operating-system failure (open, write, rename)
        InvalidFile,      // an import file that is malformed, truncated or hostile
        Unsupported,      // a database or file from a newer Kestrel
        Internal,         // a bug in Kestrel; the message says where
    };

    StoreError() = default;
    StoreError(Code code, QString message) : code_(code), message_(std::move(message)) {}
    static StoreError ok() { return {}; }

    bool isOk() const { return code_ == Code::Ok; }
    explicit operator bool() const { return isOk(); }
    Code code() const { return code_; }
    const QString& message() const { return message_; }

private:
    Code code_ = Code::Ok;
    QString message_;
};

// A value or the StoreError that explains why there is none.
template <typename T>
class [[nodiscard]] StoreResult {
public:
    StoreResult(T value) : data_(std::move(value)) {}           // NOLINT: implicit by design
    StoreResult(StoreError error) : data_(std::move(error)) {}  // NOLINT: implicit by design
    StoreResult(StoreError::Code code, QString message) : data_(StoreError(code, std::move(message))) {}

    bool isOk() const { return std::holds_alternative<T>(data_); }
    explicit operator bool() const { return isOk(); }

    T& value() & { return std::get<T>(data_); }
    const T& value() const& { return std::get<T>(data_); }
    T&& value() && { return std::get<T>(std::move(data_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    // The error; StoreError::ok() when a value is held.
    StoreError error() const { return isOk() ? StoreError::ok() : std::get<StoreError>(data_); }

private:
    std::variant<T, StoreError> data_;
};

}  // namespace kestrel::store

// Returns early from a function returning StoreError or StoreResult<T> when
// `expr` (a StoreError) fails.
#define KESTREL_STORE_TRY(expr)                              \
    do {                                                     \
        ::kestrel::store::StoreError kestrelStoreErr_ = (expr); \
        if (!kestrelStoreErr_.isOk()) return kestrelStoreErr_; \
    } while (0)
