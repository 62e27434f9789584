#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Packs what the NVIDIA test machine needs from a local build: the plugins,
# libompx_io, the conformance test binary, the ompx-io tool and the
# checkpoint example (its program and host libraries), stripped,
# and the libomptarget tests of the LLVM the build serves (llvm-suite/test,
# from tools/llvm-suite/fetch.sh: the machine has no internet).
# The machine has no LLVM development packages, so nothing is built there
# except the OpenMP test programs (with the packed clang).
#
#   pack-build.sh [OUT]     (default .pack/build-llvm<version>.tar.xz)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tools/llvm-suite/version.sh
source "$root/tools/llvm-suite/version.sh"
# shellcheck source=tools/targets/offload-targets.sh
source "$root/tools/targets/offload-targets.sh"
build=${OFFLOADIO_BUILD_DIR:-$root/build}
llvm=$(llvm_suite_version "$build")
llvm_suite_facts "$llvm"
out=${1:-$root/.pack/build-llvm$llvm.tar.xz}
# ompx-io must carry an nvptx64 image, or the CUDA plugin is never used by
# it and its GPU is not a device it can name. Under 17 and 18 the build
# runs in the trixie root, whose glibc 2.41 headers clang 17/18 cannot
# compile for nvptx64 (stdio.h's _Float128): ompx-io goes without it.
if [[ $llvm != 16 ]]; then
  echo "pack-build: LLVM $llvm: ompx-io is packed as built (the io step needs an nvptx64 image)"
elif ! grep -q '^OFFLOADIO_TOOL_TARGETS:STRING=.*nvptx64-nvidia-cuda' "$build/CMakeCache.txt"; then
  echo "pack-build: rebuilding ompx-io with an nvptx64 image"
  cmake -S "$root" -B "$build" -DOFFLOADIO_TOOL_TARGETS=nvptx64-nvidia-cuda >/dev/null
  ninja -C "$build" ompx-io offloadio-checkpoint offload_io_python >/dev/null
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/bin" "$stage/include"
# Generated headers (ompx_version.h) that the tests include.
cp "$build"/include/*.h "$stage/include/"
for plugin in $(offload_targets_table | awk '{ print $2 }'); do
  cp -L "$build/lib/libomptarget.rtl.$plugin$llvm_plugin_suffix.so" "$stage/lib/"
done
cp -L "$build"/lib/libompx_io.so* "$stage/lib/"
# The Python package and what it loads: it finds ../../lib from python/offload_io.
cp -L "$build"/lib/liboffloadio_plugins.so.1 "$build"/lib/libompx_io_devices.so.1 "$stage/lib/"
mkdir -p "$stage/python"
cp -r "$build/python/offload_io" "$stage/python/"
rm -rf "$stage/python/offload_io/__pycache__"
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
cp -r "$(bash "$root/tools/llvm-suite/fetch.sh" --llvm "$llvm")" "$stage/llvm-suite/test"
echo "$llvm" >"$stage/llvm-version"
tar -C "$stage" -cf - . | xz -T0 -6 > "$out"
ls -la "$out"
