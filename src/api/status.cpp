// Status: an error code plus a message formatted into a fixed inline buffer,
// so the error path allocates nothing either.
#include "flashattn/status.h"

#include <cstdarg>
#include <cstdio>

namespace flashattn {

const char* error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::ok:
      return "ok";
    case ErrorCode::invalid_argument:
      return "invalid_argument";
    case ErrorCode::unsupported:
      return "unsupported";
    case ErrorCode::cuda_error:
      return "cuda_error";
    case ErrorCode::internal:
      return "internal";
  }
  return "unknown_error";
}

Status Status::error(ErrorCode code, const char* format, ...) noexcept {
  Status status;
  // An "error" with code ok would read as success; keep the failure visible.
  status.code_ = code == ErrorCode::ok ? ErrorCode::internal : code;
  if (format == nullptr) return status;
  std::va_list args;
  va_start(args, format);
  // vsnprintf truncates at kMaxMessage - 1 and always terminates; its stdio
  // implementation formats into the caller's buffer without allocating for
  // the integer/string/float conversions used here.
  const int written = std::vsnprintf(status.message_, kMaxMessage, format, args);
  va_end(args);
  if (written < 0) status.message_[0] = '\0';
  return status;
}

}  // namespace flashattn
