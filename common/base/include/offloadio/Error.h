// SPDX-License-Identifier: Apache-2.0
//
// Errors inside offload-io: llvm::Error carrying an ErrorCode and a message
// that names the call, the pointer, the size and the device. They become C
// return codes only at the C ABI boundary (CApi*.cpp, libompx_io).
#ifndef OFFLOADIO_ERROR_H
#define OFFLOADIO_ERROR_H

#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace offloadio {

using llvm::Error;
using llvm::Expected;

/// Every error kind the runtime distinguishes; see ErrorCodes.def.
enum class ErrorCode : int {
#define OFFLOADIO_ERROR(Name, Value, Errno, Desc) Name = Value,
#include "offloadio/ErrorCodes.def"
};

/// Short description of \p Code, as listed in ErrorCodes.def.
const char *describe(ErrorCode Code);

/// The llvm::ErrorInfo payload of every offload-io error.
class OffloadErrorTy : public llvm::ErrorInfo<OffloadErrorTy> {
public:
  static char ID;
  OffloadErrorTy(ErrorCode Code, std::string Msg, int Errno = 0)
      : Code(Code), Msg(std::move(Msg)), Errno(Errno) {}

  /// The error kind.
  ErrorCode getCode() const { return Code; }
  /// The errno value for POSIX-level failures, 0 otherwise.
  int getErrno() const { return Errno; }
  /// The message, without the code's description.
  const std::string &getMessage() const { return Msg; }

  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  ErrorCode Code;
  std::string Msg;
  int Errno;
};

/// Build an error whose message is formatted with llvm::formatv.
template <typename... ArgsTy>
Error makeError(ErrorCode Code, const char *Fmt, ArgsTy &&...Args) {
  return llvm::make_error<OffloadErrorTy>(
      Code, llvm::formatv(Fmt, std::forward<ArgsTy>(Args)...).str());
}

/// Build an error for a failed syscall; \p Errno is kept so that the C
/// boundary can hand it back to the user unchanged.
template <typename... ArgsTy>
Error makeErrnoError(int Errno, const char *Fmt, ArgsTy &&...Args) {
  std::string Msg = llvm::formatv(Fmt, std::forward<ArgsTy>(Args)...).str();
  Msg += ": ";
  Msg += std::strerror(Errno);
  return llvm::make_error<OffloadErrorTy>(ErrorCode::IOError, std::move(Msg),
                                          Errno);
}

/// Everything an error carries, for the C boundary.
struct ErrorDetailsTy {
  ErrorCode Code = ErrorCode::Success; ///< The kind.
  std::string Message;                 ///< The message.
  int Errno = 0;                       ///< errno for POSIX failures.
};

/// Consume \p Err and return its details (Internal for foreign errors).
ErrorDetailsTy takeErrorDetails(Error Err);

/// Consume \p Err and return its code (Success for no error, Internal for a
/// foreign llvm::Error).
ErrorCode takeErrorCode(Error Err);

/// Consume \p Err and return its message (joined errors: all messages).
std::string takeErrorMessage(Error Err);

/// The errno value the C boundary hands back for an error of \p Code that
/// recorded \p Errno: \p Errno when a failed system call recorded one,
/// else the errno column of ErrorCodes.def for \p Code (EIO for a value no
/// code has). The one map from error codes to errno values.
int errnoFor(ErrorCode Code, int Errno = 0);

/// errnoFor() of the code and errno that \p Details carries.
inline int errnoFor(const ErrorDetailsTy &Details) {
  return errnoFor(Details.Code, Details.Errno);
}

/// Map an error to its errno value (errnoFor of its first payload; EIO for
/// a foreign llvm::Error), consuming it. Used by the C boundary of
/// libompx_io.
int takeErrno(Error Err);

} // namespace offloadio

#endif // OFFLOADIO_ERROR_H
