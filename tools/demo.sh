#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's demo command: installs what is missing, builds, then runs
# examples/demo.c on our x86_64 plugin with OFFLOADIO_INFO output.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${OFFLOADIO_BUILD_DIR:-$root/build}
bash "$root/tools/install-deps.sh"
bash "$root/tools/build.sh"
mkdir -p "$build/examples"
clang-16 -O2 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu \
  -I"$root/include" "$root/examples/demo.c" -o "$build/examples/demo" \
  -L"$build/lib" -lompx_io
echo "== running examples/demo.c (plugin from $build/lib)"
LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  OFFLOADIO_INFO=${OFFLOADIO_INFO:-0x10} OMPX_IO_INFO=${OMPX_IO_INFO:-1} \
  "$build/examples/demo"
