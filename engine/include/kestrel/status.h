// Errors as values at every public boundary of the engine.
//
// The engine never aborts on user input (a model file, a prompt, a setting):
// it returns a Status or a Result<T> whose message a user can act on. Messages
// name the file, key or tensor and say what was expected, e.g.
//   "model.gguf: tensor 'blk.3.attn_q.weight': data [812..4908) ends past the file (4096 bytes)".
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace kestrel {

enum class ErrorCode {
    Ok = 0,
    InvalidArgument,  // a parameter out of range
    NotFound,         // a file, key or tensor that is not there
    InvalidFile,      // a file that is malformed, truncated or hostile
    Unsupported,      // a valid file using something Kestrel does not implement
    OutOfMemory,      // host or device memory exhausted
    Io,               // the operating system refused a read or write
    Cancelled,        // the caller asked to stop
    Internal,         // a bug in Kestrel; the message says where
};

const char* errorCodeName(ErrorCode code);

class [[nodiscard]] Status {
public:
    Status() = default;
    Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status ok() { return {}; }

    bool isOk() const { return code_ == ErrorCode::Ok; }
    explicit operator bool() const { return isOk(); }
    ErrorCode code() const { return code_; }
    const std::string& message() const { return message_; }

    // "InvalidFile: model.gguf: ..." — for logs and the CLI.
    std::string toString() const;

private:
    ErrorCode code_ = ErrorCode::Ok;
    std::string message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
    Result(Status status) : data_(std::move(status)) {}  // NOLINT: implicit by design
    Result(ErrorCode code, std::string message) : data_(Status(code, std::move(message))) {}

    bool isOk() const { return std::holds_alternative<T>(data_); }
    explicit operator bool() const { return isOk(); }

    T& value() & { return std::get<T>(data_); }
    const T& value() const& { return std::get<T>(data_); }
    T&& value() && { return std::get<T>(std::move(data_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    // The error; Status::ok() when a value is held.
    Status status() const { return isOk() ? Status::ok() : std::get<Status>(data_); }

private:
    std::variant<T, Status> data_;
};

inline Status statusOf(const Status& s) { return s; }
template <typename T>
Status statusOf(const Result<T>& r) { return r.status(); }

}  // namespace kestrel

// Propagate a failing Status or Result from inside a function returning Status or Result.
#define KESTREL_RETURN_IF_ERROR(expr)                   \
    do {                                                \
        auto kestrelStatus_ = (expr);                   \
        if (!kestrelStatus_.isOk()) return ::kestrel::statusOf(kestrelStatus_); \
    } while (0)
