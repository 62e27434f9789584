// SPDX-License-Identifier: Apache-2.0
#include "JsonReader.h"

#include <cassert>
#include <cstdio>

namespace ompxio {

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
  char Hex[16];
  std::snprintf(Hex, sizeof(Hex), "byte 0x%02x", Byte);
  return Hex;
}

bool isHighSurrogate(uint16_t Unit) { return Unit >= 0xD800 && Unit < 0xDC00; }
bool isLowSurrogate(uint16_t Unit) { return Unit >= 0xDC00 && Unit < 0xE000; }

bool startsWith(std::string_view Text, size_t Pos, std::string_view Prefix) {
  return Text.substr(Pos, Prefix.size()) == Prefix;
}

/// Appends the UTF-8 encoding of \p CodePoint (at most U+10FFFF, no
/// surrogate) to \p Out.
void appendUTF8(unsigned CodePoint, std::string &Out) {
  if (CodePoint < 0x80) {
    Out.push_back(static_cast<char>(CodePoint));
  } else if (CodePoint < 0x800) {
    Out.push_back(static_cast<char>(0xC0 | CodePoint >> 6));
    Out.push_back(static_cast<char>(0x80 | (CodePoint & 0x3F)));
  } else if (CodePoint < 0x10000) {
    Out.push_back(static_cast<char>(0xE0 | CodePoint >> 12));
    Out.push_back(static_cast<char>(0x80 | (CodePoint >> 6 & 0x3F)));
    Out.push_back(static_cast<char>(0x80 | (CodePoint & 0x3F)));
  } else {
    Out.push_back(static_cast<char>(0xF0 | CodePoint >> 18));
    Out.push_back(static_cast<char>(0x80 | (CodePoint >> 12 & 0x3F)));
    Out.push_back(static_cast<char>(0x80 | (CodePoint >> 6 & 0x3F)));
    Out.push_back(static_cast<char>(0x80 | (CodePoint & 0x3F)));
  }
}

} // namespace

// RFC 3629: the lead byte fixes the length, and the ranges of the second
// byte exclude overlong forms, surrogates and code points above U+10FFFF.
bool isUTF8(std::string_view Text, size_t &BadByte) {
  size_t I = 0;
  auto Cont = [&](size_t At, unsigned char Low = 0x80,
                  unsigned char High = 0xBF) {
    if (At >= Text.size())
      return false;
    auto B = static_cast<unsigned char>(Text[At]);
    return B >= Low && B <= High;
  };
  while (I < Text.size()) {
    auto B = static_cast<unsigned char>(Text[I]);
    size_t Length = 0;
    if (B < 0x80)
      Length = 1;
    else if (B >= 0xC2 && B <= 0xDF)
      Length = Cont(I + 1) ? 2 : 0;
    else if (B == 0xE0)
      Length = Cont(I + 1, 0xA0) && Cont(I + 2) ? 3 : 0;
    else if ((B >= 0xE1 && B <= 0xEC) || B == 0xEE || B == 0xEF)
      Length = Cont(I + 1) && Cont(I + 2) ? 3 : 0;
    else if (B == 0xED)
      Length = Cont(I + 1, 0x80, 0x9F) && Cont(I + 2) ? 3 : 0;
    else if (B == 0xF0)
      Length = Cont(I + 1, 0x90) && Cont(I + 2) && Cont(I + 3) ? 4 : 0;
    else if (B >= 0xF1 && B <= 0xF3)
      Length = Cont(I + 1) && Cont(I + 2) && Cont(I + 3) ? 4 : 0;
    else if (B == 0xF4)
      Length = Cont(I + 1, 0x80, 0x8F) && Cont(I + 2) && Cont(I + 3) ? 4 : 0;
    if (Length == 0) {
      BadByte = I;
      return false;
    }
    I += Length;
  }
  return true;
}

std::optional<JsonReaderTy> JsonReaderTy::create(std::string_view Text,
                                                 unsigned MaxDepth,
                                                 JsonFaultTy &Fault,
                                                 std::string &Message) {
  JsonReaderTy Reader(Text);
  if (!Reader.check(MaxDepth, Fault, Message))
    return std::nullopt;
  Reader.Pos = 0;
  return Reader;
}

bool JsonReaderTy::syntaxError(const std::string &What,
                               std::string &Message) const {
  Message = "not JSON: " + What + " at byte " + std::to_string(Pos);
  return false;
}

void JsonReaderTy::skipWhitespace() {
  while (Pos < Text.size() && isWhitespace(Text[Pos]))
    ++Pos;
}

// The check walks the text as a loop over values with an explicit stack of
// the closing brackets still owed, so that nesting costs one byte of that
// stack per level, up to MaxDepth, and no call frames.
bool JsonReaderTy::check(unsigned MaxDepth, JsonFaultTy &Fault,
                         std::string &Message) {
  size_t BadByte = 0;
  if (!isUTF8(Text, BadByte)) {
    Fault = JsonFaultTy::NotUTF8;
    Message = "not UTF-8: invalid byte sequence at byte " +
              std::to_string(BadByte);
    return false;
  }
  Fault = JsonFaultTy::NotJSON;
  std::string Closers;
  for (;;) {
    // The cursor is where a value must start.
    skipWhitespace();
    if (Pos == Text.size())
      return syntaxError("a value expected, the text ends", Message);
    char C = Text[Pos];
    if (C == '{' || C == '[') {
      if (Closers.size() == MaxDepth) {
        Fault = JsonFaultTy::TooDeep;
        Message = "arrays and objects nested more than " +
                  std::to_string(MaxDepth) + " levels deep at byte " +
                  std::to_string(Pos);
        return false;
      }
      ++Pos;
      Closers.push_back(C == '{' ? '}' : ']');
      skipWhitespace();
      if (Pos == Text.size() || Text[Pos] != Closers.back()) {
        if (C == '{' && !checkMemberName(Message))
          return false;
        continue;
      }
      ++Pos;
      Closers.pop_back();
    } else if (C == '"') {
      if (!checkString(Message))
        return false;
    } else if (C == '-' || isDigit(C)) {
      if (!checkNumber(Message))
        return false;
    } else if (startsWith(Text, Pos, "true")) {
      Pos += 4;
    } else if (startsWith(Text, Pos, "false")) {
      Pos += 5;
    } else if (startsWith(Text, Pos, "null")) {
      Pos += 4;
    } else {
      return syntaxError("a value expected, found " + shownByte(C), Message);
    }
    // A value ended: close what it ended, then expect the next member or
    // element.
    for (;;) {
      skipWhitespace();
      if (Closers.empty()) {
        if (Pos != Text.size())
          return syntaxError("text after the value", Message);
        return true;
      }
      if (Pos == Text.size())
        return syntaxError(std::string("',' or '") + Closers.back() +
                               "' expected, the text ends",
                           Message);
      C = Text[Pos];
      if (C == Closers.back()) {
        ++Pos;
        Closers.pop_back();
        continue;
      }
      if (C != ',')
        return syntaxError(std::string("',' or '") + Closers.back() +
                               "' expected, found " + shownByte(C),
                           Message);
      ++Pos;
      if (Closers.back() == '}') {
        skipWhitespace();
        if (!checkMemberName(Message))
          return false;
      }
      break;
    }
  }
}

bool JsonReaderTy::checkMemberName(std::string &Message) {
  if (Pos == Text.size() || Text[Pos] != '"')
    return syntaxError("a member name expected", Message);
  if (!checkString(Message))
    return false;
  skipWhitespace();
  if (Pos == Text.size() || Text[Pos] != ':')
    return syntaxError("':' expected after a member name", Message);
  ++Pos;
  return true;
}

bool JsonReaderTy::checkHex4(uint16_t &Unit, std::string &Message) {
  Unit = 0;
  for (int I = 0; I < 4; ++I, ++Pos) {
    int Digit = Pos < Text.size() ? hexValue(Text[Pos]) : -1;
    if (Digit < 0)
      return syntaxError("four hex digits expected after \\u", Message);
    Unit = static_cast<uint16_t>(Unit << 4 | Digit);
  }
  return true;
}

// Surrogate escapes must pair up: a lone one names no character, and the
// decoded string could not be UTF-8.
bool JsonReaderTy::checkString(std::string &Message) {
  ++Pos; // The opening quote.
  for (;;) {
    if (Pos == Text.size())
      return syntaxError("unterminated string", Message);
    char C = Text[Pos];
    if (C == '"') {
      ++Pos;
      return true;
    }
    if (static_cast<unsigned char>(C) < 0x20)
      return syntaxError("control character in a string", Message);
    if (C != '\\') {
      ++Pos;
      continue;
    }
    ++Pos;
    char Escape = Pos < Text.size() ? Text[Pos] : '\0';
    if (Escape != '\0' && std::string_view("\"\\/bfnrt").find(Escape) !=
                              std::string_view::npos) {
      ++Pos;
      continue;
    }
    if (Escape != 'u')
      return syntaxError("invalid escape in a string", Message);
    ++Pos;
    uint16_t Unit;
    if (!checkHex4(Unit, Message))
      return false;
    if (isLowSurrogate(Unit))
      return syntaxError("unpaired surrogate escape in a string", Message);
    if (!isHighSurrogate(Unit))
      continue;
    if (!startsWith(Text, Pos, "\\u"))
      return syntaxError("unpaired surrogate escape in a string", Message);
    Pos += 2;
    if (!checkHex4(Unit, Message))
      return false;
    if (!isLowSurrogate(Unit))
      return syntaxError("unpaired surrogate escape in a string", Message);
  }
}

// RFC 8259: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool JsonReaderTy::checkNumber(std::string &Message) {
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
    return syntaxError("a digit expected in a number", Message);
  if (Pos < Text.size() && Text[Pos] == '.') {
    ++Pos;
    if (!Digits())
      return syntaxError("a digit expected after '.' in a number", Message);
  }
  if (Pos < Text.size() && (Text[Pos] == 'e' || Text[Pos] == 'E')) {
    ++Pos;
    if (Pos < Text.size() && (Text[Pos] == '+' || Text[Pos] == '-'))
      ++Pos;
    if (!Digits())
      return syntaxError("a digit expected in a number's exponent", Message);
  }
  return true;
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
      static constexpr std::string_view Letters = "bfnrt",
                                        Controls = "\b\f\n\r\t";
      size_t Letter = Letters.find(Escape);
      Out.push_back(Letter == std::string_view::npos ? Escape
                                                     : Controls[Letter]);
      continue;
    }
    unsigned CodePoint = readHex4();
    if (isHighSurrogate(static_cast<uint16_t>(CodePoint))) {
      Pos += 2; // The check saw "\u" and a low surrogate follow.
      unsigned Low = readHex4();
      CodePoint = 0x10000 + ((CodePoint - 0xD800) << 10) + (Low - 0xDC00);
    }
    appendUTF8(CodePoint, Out);
  }
  Pos = End;
}

std::string_view JsonReaderTy::readNumber() {
  skipWhitespace();
  size_t Start = Pos;
  while (Pos < Text.size() && isScalarChar(Text[Pos]))
    ++Pos;
  return Text.substr(Start, Pos - Start);
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

} // namespace ompxio
