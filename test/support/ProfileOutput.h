// SPDX-License-Identifier: Apache-2.0
//
// What a TimeProfileTy prints, read back by the unit tests: the output of
// one printAndReset, and the calls per entry point or stage in it.
#ifndef OFFLOADIO_TEST_SUPPORT_PROFILEOUTPUT_H
#define OFFLOADIO_TEST_SUPPORT_PROFILEOUTPUT_H

#include "offloadio/Profile.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace offloadio {

/// The output of \p Profile.printAndReset(): what it recorded since the
/// last print, after which it counts afresh.
inline std::string printedProfile(TimeProfileTy &Profile) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  Profile.printAndReset(OS, "test");
  OS.flush();
  return Out;
}

/// Calls per name in a printAndReset() output; a name absent from it is
/// absent from the map (0 through operator[]). A line of another shape fails
/// the calling test.
inline std::map<std::string, uint64_t> profileCalls(const std::string &Output) {
  std::map<std::string, uint64_t> Calls;
  std::istringstream Lines(Output);
  for (std::string Line; std::getline(Lines, Line);) {
    const std::string Marker = ": profile: ";
    size_t At = Line.find(Marker);
    EXPECT_NE(At, std::string::npos) << Line;
    if (At == std::string::npos)
      continue;
    std::string Rest = Line.substr(At + Marker.size());
    if (Rest.rfind("entry point or stage,", 0) == 0)
      continue;
    // "<name padded to 22> <calls> <total ms> <mean us>": the name may
    // hold spaces, the last three fields do not.
    std::istringstream Fields(Rest);
    std::vector<std::string> Words;
    for (std::string W; Fields >> W;)
      Words.push_back(W);
    EXPECT_GE(Words.size(), 4u) << Line;
    if (Words.size() < 4)
      continue;
    std::string Name = Words[0];
    for (size_t I = 1; I + 3 < Words.size(); ++I)
      Name += " " + Words[I];
    Calls[Name] = std::stoull(Words[Words.size() - 3]);
  }
  return Calls;
}

} // namespace offloadio

#endif // OFFLOADIO_TEST_SUPPORT_PROFILEOUTPUT_H
