// SPDX-License-Identifier: Apache-2.0
//
// The pattern file of the IO engine tests: the byte at each offset, and a
// count of the bytes of a buffer that differ from it.
#ifndef OFFLOADIO_TEST_FILE_PATTERN_H
#define OFFLOADIO_TEST_FILE_PATTERN_H

#include <cstddef>

namespace offloadio::unittest {

/// The byte at offset \p O of a pattern file made with \p Seed.
inline char pat(size_t O, unsigned Seed = 1) {
  return char(O * 7 + (O >> 8) * 31 + (O >> 16) * 131 + Seed);
}

/// Bytes of Buf[0, N) that are not the pattern of \p Seed at \p Offset.
inline size_t mismatches(const char *Buf, size_t N, size_t Offset,
                         unsigned Seed = 1) {
  size_t Bad = 0;
  for (size_t I = 0; I < N; ++I)
    Bad += Buf[I] != pat(Offset + I, Seed);
  return Bad;
}

} // namespace offloadio::unittest

#endif
