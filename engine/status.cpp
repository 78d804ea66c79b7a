#include "kestrel/status.h"

namespace kestrel {

const char* errorCodeName(ErrorCode code) {
    switch (code) {
    case ErrorCode::Ok: return "Ok";
    case ErrorCode::InvalidArgument: return "InvalidArgument";
    case ErrorCode::NotFound: return "NotFound";
    case ErrorCode::InvalidFile: return "InvalidFile";
    case ErrorCode::Unsupported: return "Unsupported";
    case ErrorCode::OutOfMemory: return "OutOfMemory";
    case ErrorCode::Io: return "Io";
    case ErrorCode::Cancelled: return "Cancelled";
    case ErrorCode::Internal: return "Internal";
    }
    return "Unknown";
}

std::string Status::toString() const {
    if (isOk()) return "Ok";
    return std::string(errorCodeName(code_)) + ": " + message_;
}

}  // namespace kestrel
