// SPDX-License-Identifier: Apache-2.0
#include "JsonReader.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cassert>

namespace offloadio {
namespace checkpoint {

using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

namespace {

bool isWhitespace(char C) {
  return C == ' ' || C == '\t' || C == '\n' || C == '\r';
}

bool isDigit(char C) { return C >= '0' && C <= '9'; }

/// The characters of a number or of true, false and null: what skipping a
/// scalar that the check accepted steps over.
bool isScalarChar(char C) {
  return isDigit(C) || (C >= 'a' && C <= 'z') || C == '-' || C == '+' ||
         C == '.' || C == 'E';
}

int hexValue(char C) {
  if (isDigit(C))
    return C - '0';
  if (C >= 'a' && C <= 'f')
    return C - 'a' + 10;
  if (C >= 'A' && C <= 'F')
    return C - 'A' + 10;
  return -1;
}

/// Byte \p C of the text as a message shows it: quoted when printable
/// ASCII, else in hex, so that no control or partial UTF-8 byte reaches the
/// message.
std::string shownByte(char C) {
  auto Byte = static_cast<unsigned char>(C);
  if (Byte >= 0x20 && Byte < 0x7F)
    return std::string("'") + C + "'";
  return llvm::formatv("byte 0x{0:x-2}", Byte).str();
}

bool isHighSurrogate(uint16_t Unit) { return Unit >= 0xD800 && Unit < 0xDC00; }
bool isLowSurrogate(uint16_t Unit) { return Unit >= 0xDC00 && Unit < 0xE000; }

} // namespace

Expected<JsonReaderTy> JsonReaderTy::create(StringRef Text, unsigned MaxDepth) {
  JsonReaderTy Reader(Text);
  if (Error Err = Reader.check(MaxDepth))
    return std::move(Err);
  Reader.Pos = 0;
  return Reader;
}

Error JsonReaderTy::syntaxError(const llvm::Twine &What) const {
  return llvm::createStringError(
      std::make_error_code(std::errc::invalid_argument),
      llvm::formatv("not JSON: {0} at byte {1}", What.str(), Pos).str());
}

void JsonReaderTy::skipWhitespace() {
  while (Pos < Text.size() && isWhitespace(Text[Pos]))
    ++Pos;
}

// The check walks the text as a loop over values with an explicit stack of
// the closing brackets still owed, so that nesting costs one byte of that
// stack per level, up to MaxDepth, and no call frames.
Error JsonReaderTy::check(unsigned MaxDepth) {
  size_t BadByte = 0;
  if (!llvm::json::isUTF8(Text, &BadByte))
    return llvm::createStringError(
        std::make_error_code(std::errc::invalid_argument),
        llvm::formatv("not UTF-8: invalid byte sequence at byte {0}", BadByte)
            .str());
  llvm::SmallVector<char, 16> Closers;
  for (;;) {
    // The cursor is where a value must start.
    skipWhitespace();
    if (Pos == Text.size())
      return syntaxError("a value expected, the text ends");
    char C = Text[Pos];
    if (C == '{' || C == '[') {
      if (Closers.size() == MaxDepth)
        return llvm::createStringError(
            std::make_error_code(std::errc::invalid_argument),
            llvm::formatv("arrays and objects nested more than {0} levels "
                          "deep at byte {1}",
                          MaxDepth, Pos)
                .str());
      ++Pos;
      Closers.push_back(C == '{' ? '}' : ']');
      skipWhitespace();
      if (Pos == Text.size() || Text[Pos] != Closers.back()) {
        if (C == '{')
          if (Error Err = checkMemberName())
            return Err;
        continue;
      }
      ++Pos;
      Closers.pop_back();
    } else if (C == '"') {
      if (Error Err = checkString())
        return Err;
    } else if (C == '-' || isDigit(C)) {
      if (Error Err = checkNumber())
        return Err;
    } else if (Text.substr(Pos).starts_with("true")) {
      Pos += 4;
    } else if (Text.substr(Pos).starts_with("false")) {
      Pos += 5;
    } else if (Text.substr(Pos).starts_with("null")) {
      Pos += 4;
    } else {
      return syntaxError("a value expected, found " + shownByte(C));
    }
    // A value ended: close what it ended, then expect the next member or
    // element.
    for (;;) {
      skipWhitespace();
      if (Closers.empty()) {
        if (Pos != Text.size())
          return syntaxError("text after the value");
        return Error::success();
      }
      if (Pos == Text.size())
        return syntaxError(llvm::formatv("',' or '{0}' expected, the text "
                                         "ends",
                                         Closers.back()));
      C = Text[Pos];
      if (C == Closers.back()) {
        ++Pos;
        Closers.pop_back();
        continue;
      }
      if (C != ',')
        return syntaxError(llvm::formatv("',' or '{0}' expected, found {1}",
                                         Closers.back(), shownByte(C)));
      ++Pos;
      if (Closers.back() == '}') {
        skipWhitespace();
        if (Error Err = checkMemberName())
          return Err;
      }
      break;
    }
  }
}

Error JsonReaderTy::checkMemberName() {
  if (Pos == Text.size() || Text[Pos] != '"')
    return syntaxError("a member name expected");
  if (Error Err = checkString())
    return Err;
  skipWhitespace();
  if (Pos == Text.size() || Text[Pos] != ':')
    return syntaxError("':' expected after a member name");
  ++Pos;
  return Error::success();
}

Error JsonReaderTy::checkHex4(uint16_t &Unit) {
  Unit = 0;
  for (int I = 0; I < 4; ++I, ++Pos) {
    int Digit = Pos < Text.size() ? hexValue(Text[Pos]) : -1;
    if (Digit < 0)
      return syntaxError("four hex digits expected after \\u");
    Unit = static_cast<uint16_t>(Unit << 4 | Digit);
  }
  return Error::success();
}

// Surrogate escapes must pair up: a lone one names no character, and the
// decoded string could not be UTF-8.
Error JsonReaderTy::checkString() {
  ++Pos; // The opening quote.
  for (;;) {
    if (Pos == Text.size())
      return syntaxError("unterminated string");
    char C = Text[Pos];
    if (C == '"') {
      ++Pos;
      return Error::success();
    }
    if (static_cast<unsigned char>(C) < 0x20)
      return syntaxError("control character in a string");
    if (C != '\\') {
      ++Pos;
      continue;
    }
    ++Pos;
    char Escape = Pos < Text.size() ? Text[Pos] : '\0';
    if (StringRef("\"\\/bfnrt").contains(Escape)) {
      ++Pos;
      continue;
    }
    if (Escape != 'u')
      return syntaxError("invalid escape in a string");
    ++Pos;
    uint16_t Unit;
    if (Error Err = checkHex4(Unit))
      return Err;
    if (isLowSurrogate(Unit))
      return syntaxError("unpaired surrogate escape in a string");
    if (!isHighSurrogate(Unit))
      continue;
    if (!Text.substr(Pos).starts_with("\\u"))
      return syntaxError("unpaired surrogate escape in a string");
    Pos += 2;
    if (Error Err = checkHex4(Unit))
      return Err;
    if (!isLowSurrogate(Unit))
      return syntaxError("unpaired surrogate escape in a string");
  }
}

// RFC 8259: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
Error JsonReaderTy::checkNumber() {
  auto Digits = [&] {
    size_t Start = Pos;
    while (Pos < Text.size() && isDigit(Text[Pos]))
      ++Pos;
    return Pos > Start;
  };
  if (Text[Pos] == '-')
    ++Pos;
  if (Pos < Text.size() && Text[Pos] == '0')
    ++Pos;
  else if (!Digits())
    return syntaxError("a digit expected in a number");
  if (Pos < Text.size() && Text[Pos] == '.') {
    ++Pos;
    if (!Digits())
      return syntaxError("a digit expected after '.' in a number");
  }
  if (Pos < Text.size() && (Text[Pos] == 'e' || Text[Pos] == 'E')) {
    ++Pos;
    if (Pos < Text.size() && (Text[Pos] == '+' || Text[Pos] == '-'))
      ++Pos;
    if (!Digits())
      return syntaxError("a digit expected in a number's exponent");
  }
  return Error::success();
}

JsonReaderTy::KindTy JsonReaderTy::kind() {
  skipWhitespace();
  assert(Pos < Text.size() && "the cursor is not on a value");
  switch (Text[Pos]) {
  case '{':
    return KindTy::Object;
  case '[':
    return KindTy::Array;
  case '"':
    return KindTy::String;
  case 't':
  case 'f':
    return KindTy::Bool;
  case 'n':
    return KindTy::Null;
  default:
    return KindTy::Number;
  }
}

void JsonReaderTy::enterObject() {
  skipWhitespace();
  assert(Text[Pos] == '{' && "the cursor is not on an object");
  ++Pos;
}

void JsonReaderTy::enterArray() {
  skipWhitespace();
  assert(Text[Pos] == '[' && "the cursor is not on an array");
  ++Pos;
}

// In checked text, what follows a container's opening bracket or one of its
// values is, after whitespace, a ',' or the closing bracket; so one rule
// serves the first member and the later ones.
bool JsonReaderTy::nextMember(std::string &Key) {
  skipWhitespace();
  if (Text[Pos] == '}') {
    ++Pos;
    return false;
  }
  if (Text[Pos] == ',') {
    ++Pos;
    skipWhitespace();
  }
  readString(Key);
  skipWhitespace();
  ++Pos; // The ':'.
  return true;
}

bool JsonReaderTy::nextElement() {
  skipWhitespace();
  if (Text[Pos] == ']') {
    ++Pos;
    return false;
  }
  if (Text[Pos] == ',')
    ++Pos;
  return true;
}

uint64_t JsonReaderTy::count() {
  JsonReaderTy Walk = *this;
  bool Object = Walk.kind() == KindTy::Object;
  ++Walk.Pos;
  uint64_t Count = 0;
  for (;;) {
    Walk.skipWhitespace();
    if (Walk.Text[Walk.Pos] == (Object ? '}' : ']'))
      return Count;
    if (Walk.Text[Walk.Pos] == ',') {
      ++Walk.Pos;
      Walk.skipWhitespace();
    }
    if (Object) {
      Walk.skipString();
      Walk.skipWhitespace();
      ++Walk.Pos; // The ':'.
    }
    Walk.skipValue();
    ++Count;
  }
}

void JsonReaderTy::skipString() {
  ++Pos; // The opening quote.
  while (Text[Pos] != '"')
    Pos += Text[Pos] == '\\' ? 2 : 1;
  ++Pos;
}

uint16_t JsonReaderTy::readHex4() {
  uint16_t Unit = 0;
  for (int I = 0; I < 4; ++I)
    Unit = static_cast<uint16_t>(Unit << 4 | hexValue(Text[Pos++]));
  return Unit;
}

void JsonReaderTy::readString(std::string &Out) {
  skipWhitespace();
  size_t Start = Pos;
  skipString();
  size_t End = Pos;
  Pos = Start + 1;
  Out.clear();
  // Decoding never lengthens a string: an escape is at least as long as the
  // UTF-8 it stands for.
  Out.reserve(End - Start - 2);
  while (Text[Pos] != '"') {
    char C = Text[Pos++];
    if (C != '\\') {
      Out.push_back(C);
      continue;
    }
    char Escape = Text[Pos++];
    if (Escape != 'u') {
      // '"', '\\' and '/' stand for themselves.
      static constexpr llvm::StringLiteral Letters = "bfnrt",
                                           Controls = "\b\f\n\r\t";
      size_t Letter = Letters.find(Escape);
      Out.push_back(Letter == StringRef::npos ? Escape : Controls[Letter]);
      continue;
    }
    unsigned CodePoint = readHex4();
    if (isHighSurrogate(static_cast<uint16_t>(CodePoint))) {
      Pos += 2; // The check saw "\u" and a low surrogate follow.
      unsigned Low = readHex4();
      CodePoint = 0x10000 + ((CodePoint - 0xD800) << 10) + (Low - 0xDC00);
    }
    char Bytes[UNI_MAX_UTF8_BYTES_PER_CODE_POINT];
    char *Next = Bytes;
    llvm::ConvertCodePointToUTF8(CodePoint, Next);
    Out.append(Bytes, Next);
  }
  Pos = End;
}

StringRef JsonReaderTy::readNumber() {
  skipWhitespace();
  size_t Start = Pos;
  while (Pos < Text.size() && isScalarChar(Text[Pos]))
    ++Pos;
  return Text.slice(Start, Pos);
}

// In checked text the brackets balance outside strings, so counting them
// finds the value's end without a stack.
void JsonReaderTy::skipValue() {
  skipWhitespace();
  uint64_t Depth = 0;
  do {
    char C = Text[Pos];
    if (C == '"') {
      skipString();
    } else if (C == '{' || C == '[') {
      ++Depth;
      ++Pos;
    } else if (C == '}' || C == ']') {
      --Depth;
      ++Pos;
    } else if (isScalarChar(C)) {
      while (Pos < Text.size() && isScalarChar(Text[Pos]))
        ++Pos;
    } else { // Whitespace, ',' and ':' inside a container.
      ++Pos;
    }
  } while (Depth > 0);
}

} // namespace checkpoint
} // namespace offloadio
