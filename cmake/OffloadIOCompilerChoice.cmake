# SPDX-License-Identifier: Apache-2.0
# Included before project(): the plugins and libompx_io are OpenMP offload
# code that only the clang of the LLVM whose libomptarget they serve builds
# (gcc's omp.h, for one, declares omp_depend_t differently). When neither
# CMAKE_<LANG>_COMPILER nor CC/CXX names a compiler, pick clang-N and
# clang++-N of that LLVM: N from LLVM_DIR when given, else the newest of 18,
# 17 and 16 that has both its clang and its CMake package installed (LLVM_DIR
# is then set to that package, so the two agree).
# offloadio_check_compiler(), after project() and find_package(LLVM), stops a
# configure whose compiler is not that clang with the command to run.

set(_offloadio_llvm_versions 18 17 16)

function(_offloadio_pick_compiler)
  if(DEFINED CMAKE_C_COMPILER OR DEFINED CMAKE_CXX_COMPILER OR DEFINED ENV{CC}
     OR DEFINED ENV{CXX})
    return()
  endif()
  set(_versions ${_offloadio_llvm_versions})
  if(DEFINED LLVM_DIR AND LLVM_DIR MATCHES "llvm-([0-9]+)")
    set(_versions ${CMAKE_MATCH_1})
  endif()
  foreach(_v IN LISTS _versions)
    find_program(_offloadio_clang_${_v} NAMES clang-${_v} NO_CACHE)
    find_program(_offloadio_clangxx_${_v} NAMES clang++-${_v} NO_CACHE)
    if(_offloadio_clang_${_v} AND _offloadio_clangxx_${_v}
       AND (DEFINED LLVM_DIR OR EXISTS /usr/lib/llvm-${_v}/lib/cmake/llvm/LLVMConfig.cmake))
      set(CMAKE_C_COMPILER ${_offloadio_clang_${_v}} CACHE FILEPATH "C compiler (clang of the LLVM served)")
      set(CMAKE_CXX_COMPILER ${_offloadio_clangxx_${_v}} CACHE FILEPATH "C++ compiler (clang of the LLVM served)")
      if(NOT DEFINED LLVM_DIR)
        set(LLVM_DIR /usr/lib/llvm-${_v}/lib/cmake/llvm CACHE PATH "LLVM whose libomptarget the plugins serve")
      endif()
      message(STATUS "offload-io: compiler clang-${_v} (no compiler was named)")
      return()
    endif()
  endforeach()
endfunction()
_offloadio_pick_compiler()

# offloadio_check_compiler(): fails the configure unless C and C++ are
# compiled by clang of LLVM_VERSION_MAJOR.
function(offloadio_check_compiler)
  set(_want ${LLVM_VERSION_MAJOR})
  foreach(_lang C CXX)
    if(NOT CMAKE_${_lang}_COMPILER_ID STREQUAL "Clang"
       OR NOT CMAKE_${_lang}_COMPILER_VERSION MATCHES "^${_want}\\.")
      set(_bin ${CMAKE_BINARY_DIR})
      message(FATAL_ERROR
        "offload-io: the ${_lang} compiler is ${CMAKE_${_lang}_COMPILER_ID} "
        "${CMAKE_${_lang}_COMPILER_VERSION} (${CMAKE_${_lang}_COMPILER}); the plugins and "
        "libompx_io must be built by clang ${_want}, the compiler of the LLVM found "
        "(${LLVM_DIR}). Start again in an empty build folder with:\n"
        "  cmake -S ${CMAKE_SOURCE_DIR} -B ${_bin} -DCMAKE_C_COMPILER=clang-${_want} "
        "-DCMAKE_CXX_COMPILER=clang++-${_want} -DLLVM_DIR=${LLVM_DIR}\n"
        "(install clang-${_want} first if it is missing; README.md lists the packages).")
    endif()
  endforeach()
endfunction()
