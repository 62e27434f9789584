#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds offload-io into build/ (or $OFFLOADIO_BUILD_DIR) for
# the libomptarget of LLVM $OFFLOADIO_LLVM_VERSION (16, the default, 17 or
# 18: clang-N and /usr/lib/llvm-N must be installed; on Debian bookworm,
# 17 and 18 are built inside the trixie root of tools/trixie/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=${OFFLOADIO_LLVM_VERSION:-16}
case $version in
  16|17|18) ;;
  *) echo "build.sh: OFFLOADIO_LLVM_VERSION=$version: plugins can be built for LLVM 16, 17 or 18" >&2
     exit 2 ;;
esac
build=${OFFLOADIO_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_C_COMPILER="clang-$version" \
  -DCMAKE_CXX_COMPILER="clang++-$version" \
  -DLLVM_DIR="/usr/lib/llvm-$version/lib/cmake/llvm" "$@" >/dev/null
ninja -C "$build"
