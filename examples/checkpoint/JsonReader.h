// SPDX-License-Identifier: Apache-2.0
//
// A JSON reader whose cost the text cannot choose. JsonReaderTy::create
// checks the whole text first (the RFC 8259 grammar, UTF-8, paired
// surrogate escapes, a nesting limit) in one pass, without recursion and
// without allocating; the reader it returns then walks the checked text
// value by value. It builds no tree: the caller keeps what it wants and
// skips the rest in place, so memory follows what the caller keeps, and
// stack depth is constant whatever the nesting.
#ifndef OFFLOADIO_EXAMPLES_CHECKPOINT_JSONREADER_H
#define OFFLOADIO_EXAMPLES_CHECKPOINT_JSONREADER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace offloadio {
namespace checkpoint {

/// A cursor over one checked JSON value. Its methods walk text that create
/// accepted and do not fail; each one that reads or skips a value must be
/// called with the cursor on a value of that kind (see kind()).
class JsonReaderTy {
public:
  /// The kinds of JSON value.
  enum class KindTy { Null, Bool, Number, String, Array, Object };

  /// A reader of \p Text, which must be exactly one JSON value in UTF-8 with
  /// at most \p MaxDepth arrays and objects open at once. The error says
  /// what is wrong and at which byte: "not UTF-8: ...", "not JSON: ..." or
  /// "arrays and objects nested more than MaxDepth levels deep ...".
  static llvm::Expected<JsonReaderTy> create(llvm::StringRef Text,
                                             unsigned MaxDepth);

  /// The kind of the value at the cursor.
  KindTy kind();
  /// Byte offset of the cursor in the text.
  size_t offset() const { return Pos; }

  /// Steps into the object at the cursor.
  void enterObject();
  /// Moves to the next member of the innermost object entered, once the
  /// previous member's value has been read or skipped: decodes its name
  /// into \p Key and leaves the cursor on its value. After the last member,
  /// leaves the object and returns false.
  bool nextMember(std::string &Key);
  /// Steps into the array at the cursor.
  void enterArray();
  /// Moves to the next element of the innermost array entered, once the
  /// previous one has been read or skipped; after the last, leaves the
  /// array and returns false.
  bool nextElement();
  /// Members of the object, or elements of the array, at the cursor; the
  /// cursor does not move.
  uint64_t count();

  /// Decodes the string at the cursor into \p Out (whose capacity grows to
  /// at most the string's length in the text) and moves past it.
  void readString(std::string &Out);
  /// The number at the cursor as the text writes it; moves past it.
  llvm::StringRef readNumber();
  /// Moves past the value at the cursor, whatever it holds.
  void skipValue();

private:
  explicit JsonReaderTy(llvm::StringRef Text) : Text(Text) {}

  /// The grammar, UTF-8 and depth check of create.
  llvm::Error check(unsigned MaxDepth);
  llvm::Error checkString();
  llvm::Error checkHex4(uint16_t &Unit);
  llvm::Error checkNumber();
  llvm::Error checkMemberName();
  llvm::Error syntaxError(const llvm::Twine &What) const;

  void skipWhitespace();
  /// Moves past the string at the cursor without decoding it.
  void skipString();
  uint16_t readHex4();

  llvm::StringRef Text;
  size_t Pos = 0;
};

} // namespace checkpoint
} // namespace offloadio

#endif // OFFLOADIO_EXAMPLES_CHECKPOINT_JSONREADER_H
