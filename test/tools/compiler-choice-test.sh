#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The configure step's compiler choice (cmake/OffloadIOCompilerChoice.cmake):
# with no compiler named it picks clang-N of the LLVM it finds; named gcc,
# it stops with the exact cmake command that works, which then configures.
#
#   compiler-choice-test.sh SOURCE_DIR LLVM_VERSION
set -euo pipefail
src=${1:?usage: compiler-choice-test.sh SOURCE_DIR LLVM_VERSION}
llvm=${2:?usage: compiler-choice-test.sh SOURCE_DIR LLVM_VERSION}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "compiler-choice-test: $*" >&2
  exit 1
}
configure() {
  local dir=$1
  shift
  cmake -S "$src" -B "$work/$dir" -DOFFLOADIO_BUILD_TESTS=OFF "$@" >"$work/$dir.log" 2>&1
}

# No compiler named: clang-N of the LLVM found.
env -u CC -u CXX bash -c "$(declare -f configure); src='$src' work='$work'; configure plain -DLLVM_DIR=/usr/lib/llvm-$llvm/lib/cmake/llvm" ||
  fail "configuring with no compiler named failed: $(tail -5 "$work/plain.log")"
grep -q "compiler clang-$llvm (no compiler was named)" "$work/plain.log" ||
  fail "no 'compiler clang-$llvm' line: $(grep offload-io "$work/plain.log")"
grep -q "^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++-$llvm\$" "$work/plain/CMakeCache.txt" ||
  fail "the C++ compiler is not clang++-$llvm"

# gcc named: refused, with the command to run.
if command -v gcc >/dev/null && command -v g++ >/dev/null; then
  if CC=gcc CXX=g++ configure gcc -DLLVM_DIR=/usr/lib/llvm-$llvm/lib/cmake/llvm; then
    fail "configuring with gcc succeeded"
  fi
  cmd=$(grep -o "cmake -S .* -DLLVM_DIR=[^ ]*" "$work/gcc.log" | head -n1)
  [[ $cmd == *"-DCMAKE_C_COMPILER=clang-$llvm -DCMAKE_CXX_COMPILER=clang++-$llvm"* ]] ||
    fail "the refusal names no command with clang-$llvm: $(cat "$work/gcc.log")"
  rm -rf "$work/gcc"
  # The command it names works as written (tests off, as above).
  eval "env -u CC -u CXX $cmd -DOFFLOADIO_BUILD_TESTS=OFF" >"$work/again.log" 2>&1 ||
    fail "the named command failed: $(tail -5 "$work/again.log")"
fi
echo "compiler-choice-test: ok"
