// SPDX-License-Identifier: Apache-2.0
#include "offloadio/Error.h"

#include <cstring>

using namespace offloadio;

char OffloadErrorTy::ID = 0;

const char *offloadio::describe(ErrorCode Code) {
  switch (Code) {
#define OFFLOADIO_ERROR(Name, Value, Desc)                                     \
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

int offloadio::takeErrno(Error Err) {
  int Result = 0;
  llvm::handleAllErrors(
      std::move(Err),
      [&](const OffloadErrorTy &E) {
        if (E.getErrno()) {
          Result = E.getErrno();
          return;
        }
        switch (E.getCode()) {
        case ErrorCode::Success:
          Result = 0;
          break;
        case ErrorCode::InvalidArgument:
        case ErrorCode::Overlap:
          Result = EINVAL;
          break;
        case ErrorCode::InvalidDevice:
        case ErrorCode::ForkedChild:
          Result = ENODEV;
          break;
        case ErrorCode::OutOfResources:
          Result = ENOMEM;
          break;
        case ErrorCode::NotFound:
          Result = ENOENT;
          break;
        case ErrorCode::Busy:
          Result = EBUSY;
          break;
        case ErrorCode::Unsupported:
          Result = ENOTSUP;
          break;
        default:
          Result = EIO;
          break;
        }
      },
      [&](const llvm::ErrorInfoBase &) { Result = EIO; });
  return Result;
}
