// SPDX-License-Identifier: Apache-2.0
//
// A JSON reader whose cost the text cannot choose. JsonReaderTy::create
// checks the whole text first (the RFC 8259 grammar, UTF-8, paired
// surrogate escapes, a nesting limit) in one pass, without recursion and
// allocating only a byte per array or object open; the reader it returns then walks the checked text
// value by value. It builds no tree: the caller keeps what it wants and
// skips the rest in place, so memory follows what the caller keeps, and
// stack depth is constant whatever the nesting. Free of LLVM, as all of
// libompx_io.
#ifndef OMPX_IO_JSONREADER_H
#define OMPX_IO_JSONREADER_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ompxio {

/// Why create refused a text.
enum class JsonFaultTy {
  NotUTF8,  ///< An invalid UTF-8 sequence.
  NotJSON,  ///< Against the grammar.
  TooDeep,  ///< More than MaxDepth arrays and objects open at once.
};

/// A cursor over one checked JSON value. Its methods walk text that create
/// accepted and do not fail; each one that reads or skips a value must be
/// called with the cursor on a value of that kind (see kind()).
class JsonReaderTy {
public:
  /// The kinds of JSON value.
  enum class KindTy { Null, Bool, Number, String, Array, Object };

  /// A reader of \p Text, which must be exactly one JSON value in UTF-8 with
  /// at most \p MaxDepth arrays and objects open at once. Otherwise none,
  /// with \p Fault set and \p Message saying what is wrong and at which
  /// byte: "not UTF-8: ...", "not JSON: ..." or "arrays and objects nested
  /// more than MaxDepth levels deep ...".
  static std::optional<JsonReaderTy> create(std::string_view Text,
                                            unsigned MaxDepth,
                                            JsonFaultTy &Fault,
                                            std::string &Message);

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
  std::string_view readNumber();
  /// Moves past the value at the cursor, whatever it holds.
  void skipValue();

private:
  explicit JsonReaderTy(std::string_view Text) : Text(Text) {}

  /// The grammar, UTF-8 and depth check of create; false with \p Fault and
  /// \p Message set on the first problem.
  bool check(unsigned MaxDepth, JsonFaultTy &Fault, std::string &Message);
  bool checkString(std::string &Message);
  bool checkHex4(uint16_t &Unit, std::string &Message);
  bool checkNumber(std::string &Message);
  bool checkMemberName(std::string &Message);
  /// Sets \p Message to "not JSON: <What> at byte <Pos>"; false.
  bool syntaxError(const std::string &What, std::string &Message) const;

  void skipWhitespace();
  /// Moves past the string at the cursor without decoding it.
  void skipString();
  uint16_t readHex4();

  std::string_view Text;
  size_t Pos = 0;
};

/// Whether \p Text is valid UTF-8 (no overlong forms, surrogates or code
/// points above U+10FFFF); otherwise \p BadByte is the offset of the first
/// byte of the first invalid sequence.
bool isUTF8(std::string_view Text, size_t &BadByte);

} // namespace ompxio

#endif // OMPX_IO_JSONREADER_H
