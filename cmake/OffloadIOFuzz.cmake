# SPDX-License-Identifier: Apache-2.0
# OFFLOADIO_FUZZ: build the libFuzzer targets of test/fuzz (docs/fuzzing.md).
# Included before OffloadIO.cmake, because it picks the sanitizers.
#
# The fuzzers run under ASan and UBSan, and so does everything they reach:
# SANITIZE defaults to address,undefined here (it must include address). The
# whole build gets coverage instrumentation (-fsanitize=fuzzer-no-link), the
# plugins included, so that libFuzzer also sees the edges it reaches inside a
# dlopened plugin; only the fuzzers themselves link libFuzzer.
option(OFFLOADIO_FUZZ
       "Build the libFuzzer targets of test/fuzz (clang only; ASan+UBSan build)" OFF)

if(OFFLOADIO_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "OFFLOADIO_FUZZ needs clang (libFuzzer); "
                        "configure with -DCMAKE_CXX_COMPILER=clang++-16")
  endif()
  if(NOT OFFLOADIO_BUILD_TESTS)
    message(FATAL_ERROR "OFFLOADIO_FUZZ needs OFFLOADIO_BUILD_TESTS=ON")
  endif()
  if(SANITIZE STREQUAL "")
    # A normal variable: it shadows the empty cache entry for this build's
    # configuration only.
    set(SANITIZE "address,undefined")
  elseif(NOT SANITIZE MATCHES "address")
    message(FATAL_ERROR "OFFLOADIO_FUZZ: SANITIZE='${SANITIZE}' must include "
                        "address (or be left empty for address,undefined)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
