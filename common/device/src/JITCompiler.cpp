// SPDX-License-Identifier: Apache-2.0
#include "offloadio/JITCompiler.h"
#include "offloadio/LLVMSupportCompat.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

using namespace offloadio;

namespace {

const char *settingName(SettingId Id) { return settingDecl(Id).Name; }

llvm::OptimizationLevel optimizationLevel(unsigned Level) {
  switch (Level) {
  case 0:
    return llvm::OptimizationLevel::O0;
  case 1:
    return llvm::OptimizationLevel::O1;
  case 2:
    return llvm::OptimizationLevel::O2;
  default:
    return llvm::OptimizationLevel::O3;
  }
}

/// Parse \p Buffer (bitcode or IR text) named \p What into \p Context.
Expected<std::unique_ptr<llvm::Module>>
parseModule(llvm::MemoryBufferRef Buffer, llvm::LLVMContext &Context,
            const llvm::Twine &What) {
  llvm::SMDiagnostic Diag;
  std::unique_ptr<llvm::Module> M = llvm::parseIR(Buffer, Diag, Context);
  if (!M) {
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    Diag.print(nullptr, OS, /*ShowColors=*/false);
    return makeError(ErrorCode::InvalidImage, "{0} does not parse: {1}",
                     What.str(), llvm::StringRef(OS.str()).trim());
  }
  return std::move(M);
}

/// The contents of the file \p Path that setting \p Name names.
Expected<std::unique_ptr<llvm::MemoryBuffer>>
readSettingFile(const std::string &Path, const char *Name) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!Buffer)
    return makeError(ErrorCode::IOError, "cannot read {0}={1}: {2}", Name, Path,
                     Buffer.getError().message());
  return std::move(*Buffer);
}

} // namespace

Expected<llvm::StringRef> JITCompilerTy::getImage(llvm::StringRef Bitcode,
                                                  JITTargetTy &Target) {
  return Cache.getOrCompile(Bitcode, Target.getCPU(),
                            [&] { return compile(Bitcode, Target); });
}

Expected<std::unique_ptr<llvm::MemoryBuffer>>
JITCompilerTy::compile(llvm::StringRef Bitcode, JITTargetTy &Target) {
  auto Output = generateCode(Bitcode, Target);
  if (!Output)
    return Output.takeError();
  return Target.finishImage(std::move(*Output));
}

Expected<std::unique_ptr<llvm::MemoryBuffer>>
JITCompilerTy::generateCode(llvm::StringRef Bitcode, JITTargetTy &Target) {
  // A finished object replaces compilation altogether.
  if (Settings.ReplacementObject)
    return readSettingFile(*Settings.ReplacementObject,
                           settingName(SettingId::JITReplacementObject));

  llvm::LLVMContext Context;
  std::unique_ptr<llvm::Module> M;
  if (Settings.ReplacementModule) {
    auto File = readSettingFile(*Settings.ReplacementModule,
                                settingName(SettingId::JITReplacementModule));
    if (!File)
      return File.takeError();
    auto Parsed =
        parseModule((*File)->getMemBufferRef(), Context,
                    llvm::Twine(settingName(SettingId::JITReplacementModule)) +
                        "=" + *Settings.ReplacementModule);
    if (!Parsed)
      return Parsed.takeError();
    M = std::move(*Parsed);
  } else {
    auto Parsed =
        // Unnamed, as the stock plugins parse it: the dumps then match
        // theirs line for line (no "; ModuleID" line).
        parseModule(llvm::MemoryBufferRef(Bitcode, ""), Context,
                    "bitcode image of " + llvm::Twine(Bitcode.size()) +
                        " bytes");
    if (!Parsed)
      return Parsed.takeError();
    M = std::move(*Parsed);
  }

  std::call_once(TargetsRegistered, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });

  std::string CPU = Target.getCPU();
  std::string TripleName = M->getTargetTriple();
  std::string Why;
  const llvm::Target *T = llvm::TargetRegistry::lookupTarget(TripleName, Why);
  if (!T)
    return makeError(ErrorCode::Unsupported,
                     "no LLVM target for the bitcode image's triple '{0}': "
                     "{1}",
                     TripleName, Why);
  auto CodeGenLevel = llvm::CodeGenOpt::getLevel(int(Settings.OptLevel));
  if (!CodeGenLevel)
    return makeError(ErrorCode::InvalidArgument,
                     "{0}={1} is no optimisation level",
                     settingName(SettingId::JITOptLevel), Settings.OptLevel);
  std::optional<llvm::Reloc::Model> Reloc;
  if (M->getModuleFlag("PIC Level"))
    Reloc = M->getPICLevel() == llvm::PICLevel::NotPIC ? llvm::Reloc::Static
                                                       : llvm::Reloc::PIC_;
  std::unique_ptr<llvm::TargetMachine> TM(T->createTargetMachine(
      TripleName, CPU, /*Features=*/"", llvm::TargetOptions(), Reloc,
      M->getCodeModel(), *CodeGenLevel));
  if (!TM)
    return makeError(ErrorCode::Unsupported,
                     "LLVM cannot make a target machine for {0}, processor "
                     "{1}",
                     TripleName, CPU);

  if (Settings.PreOptIRModule)
    if (auto Err = printModule(*M, *Settings.PreOptIRModule,
                               settingName(SettingId::JITPreOptIRModule)))
      return std::move(Err);
  if (!Settings.SkipOpt)
    optimize(*M, *TM);
  if (Settings.PostOptIRModule)
    if (auto Err = printModule(*M, *Settings.PostOptIRModule,
                               settingName(SettingId::JITPostOptIRModule)))
      return std::move(Err);

  bool Assembly = Target.getOutputKind() == JITOutputKindTy::Assembly;
  llvm::SmallString<0> Output;
  llvm::raw_svector_ostream OS(Output);
  llvm::TargetLibraryInfoImpl TLII{llvm::Triple(TripleName)};
  llvm::legacy::PassManager CodeGen;
  CodeGen.add(new llvm::TargetLibraryInfoWrapperPass(TLII));
  if (TM->addPassesToEmitFile(CodeGen, OS, nullptr, codeGenFileType(Assembly),
                              /*DisableVerify=*/false))
    return makeError(ErrorCode::Unsupported,
                     "LLVM cannot emit {0} for {1}, processor {2}",
                     Assembly ? "assembly" : "an object", TripleName, CPU);
  CodeGen.run(*M);
  // PTX goes to the driver as a C string.
  return llvm::MemoryBuffer::getMemBufferCopy(Output.str(), "jit-" + CPU);
}

void JITCompilerTy::optimize(llvm::Module &M, llvm::TargetMachine &TM) {
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;
  llvm::PassBuilder PB(&TM);
  llvm::TargetLibraryInfoImpl TLII{llvm::Triple(M.getTargetTriple())};
  FAM.registerPass([&] { return llvm::TargetLibraryAnalysis(TLII); });
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  llvm::OptimizationLevel Level = optimizationLevel(Settings.OptLevel);
  llvm::ModulePassManager MPM = Level == llvm::OptimizationLevel::O0
                                    ? PB.buildO0DefaultPipeline(Level)
                                    : PB.buildPerModuleDefaultPipeline(Level);
  MPM.run(M, MAM);
}

Error JITCompilerTy::printModule(llvm::Module &M, const std::string &Path,
                                 const char *Name) {
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC);
  if (EC)
    return makeError(ErrorCode::IOError, "cannot write {0}={1}: {2}", Name,
                     Path, EC.message());
  M.print(OS, nullptr);
  OS.close();
  if (!OS.has_error())
    return Error::success();
  std::string Why = OS.error().message();
  // An error left set would abort the process when the stream goes.
  OS.clear_error();
  return makeError(ErrorCode::IOError, "cannot write {0}={1}: {2}", Name, Path,
                   Why);
}
