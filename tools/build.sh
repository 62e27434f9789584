#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds offload-io into build/ (or $OFFLOADIO_BUILD_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${OFFLOADIO_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang-16 \
  -DCMAKE_CXX_COMPILER=clang++-16 "$@" >/dev/null
ninja -C "$build"
