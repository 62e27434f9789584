#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The installed CMake package's side for consumers
# (cmake/offload-ioOffloadFlags.cmake.in): offloadio_offload_targets() gives
# the flags of the devices asked and refuses what is not one; a consumer
# configured with another compiler than clang-N is stopped with the command
# that works, and OFFLOADIO_ALLOW_ANY_COMPILER lets it through.
#
#   cmake-package-test.sh BUILD_DIR LLVM_VERSION
set -euo pipefail
build=${1:?usage: cmake-package-test.sh BUILD_DIR LLVM_VERSION}
llvm=${2:?usage: cmake-package-test.sh BUILD_DIR LLVM_VERSION}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "cmake-package-test: $*" >&2
  exit 1
}
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 ||
  fail "install failed: $(tail -5 "$work/install.log")"

# A project of one C file whose CMakeLists.txt ends with $1.
project() {
  local dir=$work/$2
  mkdir -p "$dir"
  echo 'int main(void) { return 0; }' >"$dir/main.c"
  cat >"$dir/CMakeLists.txt" <<EOS
cmake_minimum_required(VERSION 3.25)
project(p LANGUAGES C)
find_package(offload-io CONFIG REQUIRED)
add_executable(p main.c)
$1
EOS
}
configure() {
  local name=$1
  shift
  cmake -S "$work/$name" -B "$work/$name/b" -DCMAKE_PREFIX_PATH="$work/prefix" "$@" \
    >"$work/$name.log" 2>&1
}

# The flags of every kind of device, in the compile and link commands.
project 'offloadio_offload_targets(p host nvptx64:sm_90 amdgcn:gfx942)' flags
configure flags -DCMAKE_C_COMPILER=clang-"$llvm" ||
  fail "configure with the three devices failed: $(tail -5 "$work/flags.log")"
for f in '-fopenmp' '-fopenmp-targets=x86_64-pc-linux-gnu,nvptx64-nvidia-cuda,amdgcn-amd-amdhsa' \
  '-Xopenmp-target=nvptx64-nvidia-cuda -march=sm_90' '-Xopenmp-target=amdgcn-amd-amdhsa -march=gfx942'; do
  grep -rqF -- "$f" "$work/flags/b/CMakeFiles/p.dir/flags.make" ||
    fail "compile flags lack '$f': $(cat "$work/flags/b/CMakeFiles/p.dir/flags.make")"
  grep -rqF -- "$f" "$work/flags/b/CMakeFiles/p.dir/link.txt" ||
    fail "link flags lack '$f'"
done

# What is not a device is refused, naming what is.
for bad in 'nvptx64:gfx90a' 'cuda' 'amdgcn:sm_90' 'nvptx64:sm_90 nvptx64:sm_80'; do
  project "offloadio_offload_targets(p $bad)" bad
  if configure bad -DCMAKE_C_COMPILER=clang-"$llvm"; then
    fail "offloadio_offload_targets(p $bad) was accepted"
  fi
  grep -q "offloadio_offload_targets(p)" "$work/bad.log" ||
    fail "the refusal of '$bad' does not name the call: $(cat "$work/bad.log")"
  rm -rf "$work/bad"
done

# Another compiler: refused with the command that works, or let through.
if command -v gcc >/dev/null; then
  project '' gcc
  if configure gcc -DCMAKE_C_COMPILER=gcc; then
    fail "configuring a consumer with gcc succeeded"
  fi
  grep -q -- "-DCMAKE_C_COMPILER=clang-$llvm -DCMAKE_CXX_COMPILER=clang++-$llvm" "$work/gcc.log" ||
    fail "the refusal names no command with clang-$llvm: $(cat "$work/gcc.log")"
  rm -rf "$work/gcc/b"
  configure gcc -DCMAKE_C_COMPILER=gcc -DOFFLOADIO_ALLOW_ANY_COMPILER=ON ||
    fail "OFFLOADIO_ALLOW_ANY_COMPILER=ON did not let gcc through: $(tail -5 "$work/gcc.log")"
fi
echo "cmake-package-test: ok"
