// SPDX-License-Identifier: Apache-2.0
#include "offloadio/JITLinker.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace offloadio;

std::vector<std::string> offloadio::defaultLLDDirectories() {
  return {OFFLOADIO_LLVM_TOOLS_DIR};
}

Expected<LLDProgramTy>
offloadio::findLLD(llvm::ArrayRef<std::string> Directories) {
  for (const char *Name : {"lld", "ld.lld"})
    if (auto Path = llvm::sys::findProgramByName(Name))
      return LLDProgramTy{*Path, llvm::StringRef(Name) == "lld"};
  llvm::SmallVector<llvm::StringRef, 4> Dirs;
  for (const std::string &D : Directories)
    Dirs.push_back(D);
  if (!Dirs.empty())
    for (const char *Name : {"ld.lld", "lld"})
      if (auto Path = llvm::sys::findProgramByName(Name, Dirs))
        return LLDProgramTy{*Path, llvm::StringRef(Name) == "lld"};
  return makeError(ErrorCode::Unsupported,
                   "cannot link the JIT-compiled image: no 'lld' or 'ld.lld' "
                   "on PATH{0}{1} (install LLVM's lld, e.g. Debian's lld "
                   "package of the LLVM version, or put its bin directory on "
                   "PATH)",
                   Dirs.empty() ? "" : " nor in ",
                   llvm::join(Directories.begin(), Directories.end(), ", "));
}

namespace {

/// A temporary file, removed when it goes.
struct TempFileTy {
  llvm::SmallString<128> Path;
  ~TempFileTy() {
    // The image is already read or the error already made; a file left in
    // the temporary directory is all a failure here could cost.
    if (!Path.empty())
      (void)llvm::sys::fs::remove(Path);
  }
};

} // namespace

Expected<std::unique_ptr<llvm::MemoryBuffer>>
offloadio::linkSharedObject(const LLDProgramTy &LLD, llvm::StringRef Object,
                            llvm::StringRef CPU) {
  TempFileTy Input, Output;
  if (auto EC =
          llvm::sys::fs::createTemporaryFile("offloadio-jit", "o", Input.Path))
    return makeError(ErrorCode::IOError,
                     "createTemporaryFile failed for the linker's input: {0}",
                     EC.message());
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Input.Path, EC);
    if (EC)
      return makeError(ErrorCode::IOError, "cannot open {0}: {1}", Input.Path,
                       EC.message());
    OS << Object;
    OS.close();
    if (OS.has_error()) {
      std::string Why = OS.error().message();
      OS.clear_error();
      return makeError(ErrorCode::IOError, "cannot write {0} bytes to {1}: {2}",
                       Object.size(), Input.Path, Why);
    }
  }
  if (auto EC = llvm::sys::fs::createTemporaryFile("offloadio-jit", "so",
                                                   Output.Path))
    return makeError(ErrorCode::IOError,
                     "createTemporaryFile failed for the linker's output: "
                     "{0}",
                     EC.message());

  std::string MCPU = ("-plugin-opt=mcpu=" + CPU).str();
  llvm::SmallVector<llvm::StringRef, 12> Args = {LLD.Path};
  if (LLD.NeedsFlavor)
    Args.append({"-flavor", "gnu"});
  Args.append({"--no-undefined", "-shared", MCPU, "-o", Output.Path.str(),
               Input.Path.str()});
  std::string Why;
  int RC =
      llvm::sys::ExecuteAndWait(LLD.Path, Args, std::nullopt, {}, 0, 0, &Why);
  if (RC != 0)
    return makeError(ErrorCode::InvalidImage,
                     "{0} failed linking the JIT-compiled object for {1} (exit "
                     "status {2}){3}{4}",
                     LLD.Path, CPU, RC, Why.empty() ? "" : ": ", Why);
  auto Linked = llvm::MemoryBuffer::getFile(Output.Path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!Linked)
    return makeError(ErrorCode::IOError, "cannot read {0}'s output {1}: {2}",
                     LLD.Path, Output.Path, Linked.getError().message());
  return std::move(*Linked);
}
