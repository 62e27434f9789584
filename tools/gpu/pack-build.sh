#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Packs what the NVIDIA test machine needs from a local build: the plugins,
# libompx_io, the conformance test binary, the ompx-io tool and the
# checkpoint example (its program and host libraries), stripped,
# and LLVM 16's libomptarget tests (llvm-suite/test, from
# tools/llvm-suite/fetch.sh: the machine has no internet).
# The machine has no LLVM development packages, so nothing is built there
# except the OpenMP test programs (with the packed clang-16).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OFFLOADIO_BUILD_DIR:-$root/build}
out=${1:-$root/.pack/build.tar.xz}
# ompx-io must carry an nvptx64 image, or the CUDA plugin is never used by
# it and its GPU is not a device it can name.
if ! grep -q '^OFFLOADIO_TOOL_TARGETS:STRING=.*nvptx64-nvidia-cuda' "$build/CMakeCache.txt"; then
  echo "pack-build: rebuilding ompx-io with an nvptx64 image"
  cmake -S "$root" -B "$build" -DOFFLOADIO_TOOL_TARGETS=nvptx64-nvidia-cuda >/dev/null
  ninja -C "$build" ompx-io offloadio-checkpoint >/dev/null
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/bin" "$stage/include"
# Generated headers (ompx_version.h) that the tests include.
cp "$build"/include/*.h "$stage/include/"
cp -L "$build"/lib/libomptarget.rtl.*.nextgen.so "$build"/lib/libompx_io.so* "$stage/lib/"
for f in "$build"/unittests/ConformanceTest "$build"/bin/ompx-io \
    "$build"/bin/offloadio-checkpoint; do
  [[ -e $f ]] && cp "$f" "$stage/bin/"
done
# The checkpoint example's host libraries, which its lit tests link with
# the example's offload source compiled for the target (test/lit.cfg.py).
mkdir -p "$stage/lib/static"
cp "$build"/lib/static/liboffloadio_checkpoint_host.a \
  "$build"/lib/static/liboffloadio_safetensors.a "$stage/lib/static/"
strip --strip-debug "$stage"/lib/* "$stage"/bin/* 2>/dev/null || true
mkdir -p "$stage/llvm-suite"
cp -r "$(bash "$root/tools/llvm-suite/fetch.sh")" "$stage/llvm-suite/test"
tar -C "$stage" -cf - . | xz -T0 -6 > "$out"
ls -la "$out"
