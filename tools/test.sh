#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: installs what is missing, builds, then runs the
# unit tests (ctest) and the lit suite against our plugin. Fails on any failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${OFFLOADIO_BUILD_DIR:-$root/build}
bash "$root/tools/install-deps.sh"
bash "$root/tools/build.sh"
jobs=$(nproc)
echo "== unit tests"
(cd "$build" && ctest --output-on-failure -j"$jobs")
echo "== lit: x86_64-pc-linux-gnu (host plugin)"
python3 /usr/lib/llvm-16/build/utils/lit/lit.py -sv -j"$jobs" "$build/test"
if [[ -e $build/test/hsa-emu/libhsa-runtime64.so.1 ]]; then
  # The emulation runs no kernels: only the data-path tests of
  # test/offload/amdgpu run here; kernels need real AMD hardware.
  echo "== lit: amdgcn-amd-amdhsa data path (AMDGPU plugin on the HSA emulation)"
  python3 /usr/lib/llvm-16/build/utils/lit/lit.py -sv -j"$jobs" \
    --param target=amdgcn-amd-amdhsa --filter 'amdgcn-amd-amdhsa :: amdgpu/' \
    "$build/test"
fi
