#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One build-test-benchmark round on the NVIDIA machine (device tool), from the
# repository root there. Needs .pack/llvm16.tar.xz (pack-llvm16-runtime.sh
# --toolchain) and .pack/build.tar.xz (tools/gpu/pack-build.sh) carried.
# Writes logs to $OUT (or /tmp/out).
set -uo pipefail
root=$(pwd)
out=${OUT:-/tmp/out}
mkdir -p "$out" /opt/llvm16 /opt/offload-io
tar xJf .pack/llvm16.tar.xz -C /opt/llvm16
tar xJf .pack/build.tar.xz -C /opt/offload-io
export PATH=/opt/llvm16/bin:/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"

# lit site configuration for this machine.
mkdir -p /tmp/lit/test
sed -e "s|@PROJECT_SOURCE_DIR@|$root|" -e 's|@PROJECT_BINARY_DIR@|/tmp/lit|' \
    -e 's|@CMAKE_LIBRARY_OUTPUT_DIRECTORY@|/opt/offload-io/lib|' \
    -e 's|@LLVM_TOOLS_BINARY_DIR@|/opt/llvm16/bin|' -e 's|@LLVM_LIBRARY_DIR@|/opt/llvm16/lib|' \
    -e 's|@OFFLOADIO_CLANG@|/opt/llvm16/bin/clang-16|' \
    test/lit.site.cfg.py.in > /tmp/lit/test/lit.site.cfg.py

{
  echo "== conformance (cuda)"
  OFFLOADIO_CONFORMANCE_PLUGINS=cuda /opt/offload-io/bin/ConformanceTest 2>&1 | tail -40
  echo "== lit nvptx64"
  timeout 400 python3 /opt/llvm16/lit/lit.py -v -j8 --param target=nvptx64-nvidia-cuda /tmp/lit/test 2>&1 | tail -150
} 2>&1 | tee "$out/tests.log"
