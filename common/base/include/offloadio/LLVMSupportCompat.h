// SPDX-License-Identifier: Apache-2.0
//
// The few calls of LLVM's support, object and code generation libraries
// whose signatures differ between LLVM 16, 17 and 18 (the versions a build may
// use), bridged by overload resolution rather than version #ifs: the first
// overload that compiles against the LLVM at hand is chosen.
#ifndef OFFLOADIO_LLVMSUPPORTCOMPAT_H
#define OFFLOADIO_LLVMSUPPORTCOMPAT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CodeGen.h"

#include <cstddef>

namespace offloadio {
namespace compat {

/// Preferred over FallbackTy in overload resolution.
struct PreferredTy {};
/// Chosen only when the preferred overload does not compile.
struct FallbackTy {
  FallbackTy(PreferredTy) {}
};

/// LLVM 17 and later take the note's alignment.
template <typename NoteT>
auto noteDescription(const NoteT &Note, size_t Align, PreferredTy)
    -> decltype(Note.getDescAsStringRef(Align)) {
  return Note.getDescAsStringRef(Align);
}

/// LLVM 16 assumes the ELF default alignment.
template <typename NoteT>
auto noteDescription(const NoteT &Note, size_t, FallbackTy)
    -> decltype(Note.getDescAsStringRef()) {
  return Note.getDescAsStringRef();
}

/// LLVM 18 scopes the code generation file types (CodeGenFileType::...).
template <typename FileTypeT>
auto codeGenFileType(bool Assembly, PreferredTy)
    -> decltype(FileTypeT::AssemblyFile) {
  return Assembly ? FileTypeT::AssemblyFile : FileTypeT::ObjectFile;
}

/// LLVM 16 and 17 spell them CGFT_AssemblyFile and CGFT_ObjectFile.
template <typename FileTypeT>
auto codeGenFileType(bool Assembly, FallbackTy)
    -> decltype(FileTypeT::CGFT_AssemblyFile) {
  return Assembly ? FileTypeT::CGFT_AssemblyFile : FileTypeT::CGFT_ObjectFile;
}

} // namespace compat

/// The descriptor bytes of an ELF note found in a segment or section
/// aligned to \p Align bytes.
template <typename NoteT>
llvm::StringRef noteDescription(const NoteT &Note, size_t Align) {
  return compat::noteDescription(Note, Align, compat::PreferredTy{});
}

/// The code generation file type of assembly text (\p Assembly) or of an
/// object file.
inline llvm::CodeGenFileType codeGenFileType(bool Assembly) {
  return compat::codeGenFileType<llvm::CodeGenFileType>(Assembly,
                                                        compat::PreferredTy{});
}

} // namespace offloadio

#endif // OFFLOADIO_LLVMSUPPORTCOMPAT_H
