// Errors are values. Every flashattn entry point returns a Status; none throws,
// aborts or prints. The message names the offending argument and its values,
// e.g. "k: head dim 72 differs from q head dim 64".
//
// The message lives in a fixed inline buffer so that reporting an error never
// allocates (library calls allocate nothing, on the error path too).
#pragma once

#include <cstddef>

namespace flashattn {

enum class ErrorCode : int {
  ok = 0,
  invalid_argument,  // the caller's arguments break a documented rule
  unsupported,       // valid request, but no compiled backend can run it
  cuda_error,        // a CUDA runtime/driver call failed
  internal,          // a bug in flashattn: please report it
};

const char* error_code_name(ErrorCode code) noexcept;

class Status {
 public:
  static constexpr std::size_t kMaxMessage = 512;

  Status() noexcept = default;  // ok
  // printf-style message; truncated (never overflowed) past kMaxMessage - 1 characters.
  [[gnu::format(printf, 2, 3)]] static Status error(ErrorCode code, const char* format, ...) noexcept;
  static Status ok_status() noexcept { return Status(); }

  bool ok() const noexcept { return code_ == ErrorCode::ok; }
  explicit operator bool() const noexcept { return ok(); }
  ErrorCode code() const noexcept { return code_; }
  const char* message() const noexcept { return message_; }

 private:
  ErrorCode code_ = ErrorCode::ok;
  char message_[kMaxMessage] = {};
};

}  // namespace flashattn

// Propagates a non-ok Status to the caller.
#define FLASHATTN_RETURN_IF_ERROR(expr)            \
  do {                                             \
    ::flashattn::Status flashattn_status_ = (expr); \
    if (!flashattn_status_.ok()) return flashattn_status_; \
  } while (0)
