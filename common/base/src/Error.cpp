// SPDX-License-Identifier: Apache-2.0
#include "offloadio/Error.h"

#include <cstring>

using namespace offloadio;

char OffloadErrorTy::ID = 0;

const char *offloadio::describe(ErrorCode Code) {
  switch (Code) {
#define OFFLOADIO_ERROR(Name, Value, Errno, Desc)                              \
  case ErrorCode::Name:                                                        \
    return Desc;
#include "offloadio/ErrorCodes.def"
  }
  return "unknown error";
}

void OffloadErrorTy::log(llvm::raw_ostream &OS) const { OS << Msg; }

std::error_code OffloadErrorTy::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

ErrorDetailsTy offloadio::takeErrorDetails(Error Err) {
  ErrorDetailsTy Details;
  llvm::handleAllErrors(
      std::move(Err),
      // Joined errors arrive one by one: the first sets code and errno,
      // every message is kept.
      [&](const OffloadErrorTy &E) {
        if (Details.Code == ErrorCode::Success) {
          Details.Code = E.getCode();
          Details.Errno = E.getErrno();
        }
        Details.Message += (Details.Message.empty() ? "" : "; ") + E.getMessage();
      },
      [&](const llvm::ErrorInfoBase &E) {
        if (Details.Code == ErrorCode::Success)
          Details.Code = ErrorCode::Internal;
        Details.Message += (Details.Message.empty() ? "" : "; ") + E.message();
      });
  return Details;
}

ErrorCode offloadio::takeErrorCode(Error Err) {
  return takeErrorDetails(std::move(Err)).Code;
}

std::string offloadio::takeErrorMessage(Error Err) {
  return takeErrorDetails(std::move(Err)).Message;
}

int offloadio::errnoFor(ErrorCode Code, int Errno) {
  if (Errno)
    return Errno;
  switch (Code) {
#define OFFLOADIO_ERROR(Name, Value, Errno, Desc)                              \
  case ErrorCode::Name:                                                        \
    return Errno;
#include "offloadio/ErrorCodes.def"
  }
  return EIO;
}

int offloadio::takeErrno(Error Err) {
  // The first payload decides, as for takeErrorDetails (Internal: EIO for
  // a foreign error).
  return errnoFor(takeErrorDetails(std::move(Err)));
}
