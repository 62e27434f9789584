// SPDX-License-Identifier: Apache-2.0
//
// The error helpers of Error.h: construction, consumption, and the errno
// mapping the C boundary of libompx_io relies on.
#include "offloadio/Error.h"

#include "gtest/gtest.h"

#include <cerrno>
#include <cstring>
#include <set>
#include <string>

using namespace offloadio;

namespace {

/// Whether \p Needle occurs in \p Text; prints both when not.
::testing::AssertionResult contains(const std::string &Text,
                                    const std::string &Needle) {
  if (Text.find(Needle) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << Text << "' does not contain '" << Needle << "'";
}

/// Every code with its value and description, straight from the .def file,
/// so that a code added there is covered here without editing the test.
struct CodeInfoTy {
  ErrorCode Code;
  int Value;
  const char *Name;
  const char *Desc;
};

constexpr CodeInfoTy AllCodes[] = {
#define OFFLOADIO_ERROR(Name, Value, Errno, Desc)                              \
  {ErrorCode::Name, Value, #Name, Desc},
#include "offloadio/ErrorCodes.def"
};

/// A foreign llvm::Error, as a vendor-wrapping helper or LLVM itself would
/// produce.
Error makeForeignError(const char *Msg) {
  return llvm::make_error<llvm::StringError>(Msg,
                                             llvm::inconvertibleErrorCode());
}

TEST(ErrorTest, MakeErrorFormatsMessageAndKeepsCode) {
  Error Err = makeError(ErrorCode::InvalidArgument,
                        "copy of {0} bytes to {1:x} on device {2}", 128,
                        uintptr_t(0xbeef), 3);
  ASSERT_TRUE(bool(Err));
  llvm::handleAllErrors(std::move(Err), [](const OffloadErrorTy &E) {
    EXPECT_EQ(E.getCode(), ErrorCode::InvalidArgument);
    EXPECT_EQ(E.getErrno(), 0);
    EXPECT_EQ(E.getMessage(), "copy of 128 bytes to 0xbeef on device 3");
  });
}

TEST(ErrorTest, MakeErrorWithoutArguments) {
  Error Err = makeError(ErrorCode::Busy, "plain text, no braces");
  EXPECT_EQ(takeErrorMessage(std::move(Err)), "plain text, no braces");
}

TEST(ErrorTest, MakeErrnoErrorAppendsStrerrorAndKeepsErrno) {
  Error Err = makeErrnoError(ENOENT, "open {0}", "/no/such/file");
  ASSERT_TRUE(bool(Err));
  std::string Expected =
      std::string("open /no/such/file: ") + std::strerror(ENOENT);
  llvm::handleAllErrors(std::move(Err), [&](const OffloadErrorTy &E) {
    EXPECT_EQ(E.getCode(), ErrorCode::IOError);
    EXPECT_EQ(E.getErrno(), ENOENT);
    EXPECT_EQ(E.getMessage(), Expected);
  });
}

TEST(ErrorTest, LogPrintsTheMessage) {
  // llvm::toString goes through OffloadErrorTy::log.
  EXPECT_EQ(
      llvm::toString(makeError(ErrorCode::NotFound, "no entry {0}", "foo")),
      "no entry foo");
}

TEST(ErrorTest, ErrorsTravelThroughExpected) {
  auto Fail = []() -> Expected<int> {
    return makeError(ErrorCode::OutOfResources, "pool of {0} exhausted", 4);
  };
  Expected<int> V = Fail();
  ASSERT_FALSE(bool(V));
  EXPECT_EQ(takeErrorCode(V.takeError()), ErrorCode::OutOfResources);
}

TEST(ErrorTest, TakeErrorCodeOfSuccessIsSuccess) {
  EXPECT_EQ(takeErrorCode(Error::success()), ErrorCode::Success);
}

TEST(ErrorTest, TakeErrorCodeReturnsEachCode) {
  for (const CodeInfoTy &C : AllCodes)
    EXPECT_EQ(takeErrorCode(makeError(C.Code, "x")), C.Code) << C.Name;
}

TEST(ErrorTest, TakeErrorMessageOfSuccessIsEmpty) {
  EXPECT_EQ(takeErrorMessage(Error::success()), "");
}

TEST(ErrorTest, TakeErrorMessageContainsTheFormattedText) {
  // A substring check: the header promises the code's description may be part
  // of the text, but the formatted message must be there either way.
  EXPECT_TRUE(
      contains(takeErrorMessage(makeError(ErrorCode::InvalidDevice,
                                          "device {0} of {1}", 7, "x86_64")),
               "device 7 of x86_64"));
  EXPECT_TRUE(
      contains(takeErrorMessage(makeErrnoError(EACCES, "mmap {0}", "f")),
               std::string("mmap f: ") + std::strerror(EACCES)));
}

TEST(ErrorTest, TakeErrnoOfSuccessIsZero) {
  EXPECT_EQ(takeErrno(Error::success()), 0);
}

/// The errno each code maps to, as docs/errors-and-env.md and ompx_io.h
/// promise it; -1 for a code added to ErrorCodes.def but not here, so that
/// a new code cannot take its errno unseen.
int documentedErrno(ErrorCode Code) {
  switch (Code) {
  case ErrorCode::Success:
    return 0;
  case ErrorCode::InvalidArgument:
  case ErrorCode::Overlap:
    return EINVAL;
  case ErrorCode::InvalidDevice:
  case ErrorCode::ForkedChild:
  case ErrorCode::DriverShutDown:
    return ENODEV;
  case ErrorCode::OutOfResources:
    return ENOMEM;
  case ErrorCode::NotFound:
    return ENOENT;
  case ErrorCode::Busy:
    return EBUSY;
  case ErrorCode::Unsupported:
    return ENOTSUP;
  case ErrorCode::BackendError:
  case ErrorCode::IOError:
  case ErrorCode::InvalidImage:
  case ErrorCode::Internal:
    return EIO;
  }
  return -1;
}

TEST(ErrorTest, ErrnoForMapsEveryCode) {
  for (const CodeInfoTy &C : AllCodes)
    EXPECT_EQ(errnoFor(C.Code), documentedErrno(C.Code)) << C.Name;
  EXPECT_EQ(errnoFor(static_cast<ErrorCode>(12345)), EIO);
}

TEST(ErrorTest, ErrnoForPrefersTheRecordedErrno) {
  for (const CodeInfoTy &C : AllCodes) {
    EXPECT_EQ(errnoFor(C.Code, ENOSPC), ENOSPC) << C.Name;
    ErrorDetailsTy D;
    D.Code = C.Code;
    D.Errno = EMFILE;
    EXPECT_EQ(errnoFor(D), EMFILE) << C.Name;
    D.Errno = 0;
    EXPECT_EQ(errnoFor(D), documentedErrno(C.Code)) << C.Name;
  }
}

TEST(ErrorTest, TakeErrnoMapsEveryCode) {
  for (const CodeInfoTy &C : AllCodes)
    EXPECT_EQ(takeErrno(makeError(C.Code, "mapped")), documentedErrno(C.Code))
        << C.Name;
}

TEST(ErrorTest, TakeErrnoOfJoinedErrorsIsTheFirsts) {
  // As takeErrorDetails, which the other C boundaries use: the first
  // failure decides.
  EXPECT_EQ(takeErrno(llvm::joinErrors(
                makeError(ErrorCode::OutOfResources, "first"),
                makeErrnoError(ENOSPC, "second"))),
            ENOMEM);
  EXPECT_EQ(takeErrno(llvm::joinErrors(makeErrnoError(ENOSPC, "first"),
                                       makeError(ErrorCode::Busy, "second"))),
            ENOSPC);
}

TEST(ErrorTest, TakeErrnoPrefersTheRecordedErrno) {
  // A failed syscall's errno goes back to the user unchanged, whatever the
  // code says.
  EXPECT_EQ(takeErrno(makeErrnoError(ENOSPC, "write")), ENOSPC);
  EXPECT_EQ(takeErrno(makeErrnoError(EACCES, "open")), EACCES);
  EXPECT_EQ(takeErrno(llvm::make_error<OffloadErrorTy>(
                ErrorCode::InvalidArgument, "explicit", EMFILE)),
            EMFILE);
}

TEST(ErrorTest, ForeignErrorIsInternalAndEio) {
  EXPECT_EQ(takeErrorCode(makeForeignError("llvm said no")),
            ErrorCode::Internal);
  EXPECT_EQ(takeErrno(makeForeignError("llvm said no")), EIO);
  EXPECT_TRUE(contains(takeErrorMessage(makeForeignError("llvm said no")),
                       "llvm said no"));
}

// llvm::joinErrors is how drain(), deinit() and MemoryManagerTy::releaseAll()
// report several failures: takeErrorMessage must keep every payload's
// message, or the C boundary would print one failure out of many.
TEST(ErrorTest, JoinedErrorsKeepEveryMessage) {
  Error Joined = llvm::joinErrors(makeError(ErrorCode::BackendError, "first"),
                                  makeError(ErrorCode::BackendError, "second"));
  std::string Msg = takeErrorMessage(std::move(Joined));
  EXPECT_TRUE(contains(Msg, "first"));
  EXPECT_TRUE(contains(Msg, "second"));
}

TEST(ErrorTest, DescribeMatchesTheDefFile) {
  std::set<std::string> Seen;
  for (const CodeInfoTy &C : AllCodes) {
    const char *D = describe(C.Code);
    ASSERT_NE(D, nullptr) << C.Name;
    EXPECT_STREQ(D, C.Desc) << C.Name;
    EXPECT_GT(std::strlen(D), 0u) << C.Name;
    // Distinct texts, or a user could not tell two failures apart.
    EXPECT_TRUE(Seen.insert(D).second) << "duplicate description " << D;
  }
  EXPECT_EQ(Seen.size(), std::size(AllCodes));
}

TEST(ErrorTest, DescribeOfUnknownValue) {
  EXPECT_STREQ(describe(static_cast<ErrorCode>(12345)), "unknown error");
}

TEST(ErrorTest, CodeValuesAreStable) {
  // The C enum of ompx_io.h is generated from the same list: the values are
  // ABI and must be dense from 0, in the order listed.
  int Expected = 0;
  for (const CodeInfoTy &C : AllCodes) {
    EXPECT_EQ(C.Value, Expected) << C.Name;
    EXPECT_EQ(static_cast<int>(C.Code), C.Value) << C.Name;
    ++Expected;
  }
}

} // namespace
