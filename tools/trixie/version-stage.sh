#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One stage of tools/test.sh for libomptarget 17 or 18, run inside the
# trixie root (tools/trixie/in-root.sh, which starts from an empty
# environment: everything this needs is an argument).
#
#   version-stage.sh N BUILD_DIR STEP
#
# STEP: build (configure and build BUILD_DIR against LLVM N, warnings as
# errors), unit (unit and conformance tests), lit (the x86_64 lit suite),
# suite (LLVM N's own libomptarget suite on x86_64, stock plugin and ours,
# gated), amdgcn-lit (the AMDGPU data-path lit tests on the HSA emulation,
# as tools/test.sh runs them for 16), amdgcn-archs (every amdgcn lit test
# built for each AMD architecture LLVM N supports), amdgcn-suite (LLVM N's
# own libomptarget suite for amdgcn on the HSA emulation, stock plugin and
# ours, gated), amdgcn-conformance (the conformance suite against LLVM N's
# stock amdgpu plugin on the emulation, each result against its expected
# file), safetensors-compat (libompx_io's safetensors reader and
# offloadio-checkpoint against python3-safetensors, both ways; for LLVM 18),
# python (the Python package's tests with the reference safetensors).
set -euo pipefail
version=${1:?usage: version-stage.sh N BUILD_DIR STEP}
build=${2:?usage: version-stage.sh N BUILD_DIR STEP}
step=${3:?usage: version-stage.sh N BUILD_DIR STEP}
root=$(cd "$(dirname "$0")/../.." && pwd)
lit=/usr/lib/llvm-$version/build/utils/lit/lit.py
jobs=$(nproc)
export OFFLOADIO_BUILD_DIR=$build OFFLOADIO_LLVM_VERSION=$version
case $step in
  build)
    launcher=()
    if command -v ccache >/dev/null; then
      launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    fi
    # Without debug information: these builds only run tests, and CI's
    # 60 minutes hold three LLVM versions.
    bash "$root/tools/build.sh" -DOFFLOADIO_WERROR=ON "${launcher[@]}" \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" ;;
  unit)
    cd "$build" && ctest --output-on-failure -j"$jobs" -LE lit ;;
  lit)
    python3 "$lit" -sv -j"$jobs" "$build/test" ;;
  suite)
    bash "$root/tools/llvm-suite/gate.sh" x86_64-pc-linux-gnu ;;
  amdgcn-lit)
    # As tools/test.sh's amdgcn_lit for 16: the emulation runs no kernels.
    shared=$(sed -n 's/^amdgcn_shared_tests=.\(.*\).$/\1/p' "$root/tools/test.sh")
    python3 "$lit" -sv -j"$jobs" --param target=amdgcn-amd-amdhsa \
      --filter "amdgcn-amd-amdhsa :: offload/(amdgpu/|$shared)" "$build/test" ;;
  amdgcn-archs)
    bash "$root/tools/amdgcn-arch-check.sh" ;;
  amdgcn-suite)
    # run.sh puts the build's HSA emulation on the programs' library path.
    bash "$root/tools/llvm-suite/gate.sh" amdgcn-amd-amdhsa ;;
  amdgcn-conformance)
    bash "$root/tools/hsa-emu/stock-conformance.sh" ;;
  debs)
    # The Debian packages of this build, into BUILD/dist (trixie's
    # dependencies); tools/package/deb-install-check.sh installs them.
    bash "$root/tools/package/make-debs.sh" "$build/dist" ;;
  safetensors-compat)
    bash "$root/tools/trixie/safetensors-compat.sh" "$build" ;;
  python)
    # The Python package's tests, with trixie's python3-safetensors as the
    # reference: its round trips must run, not be skipped.
    OFFLOAD_IO_TEST_REQUIRE_REFERENCE=1 PYTHONPATH=$build/python \
      /usr/bin/python3 -m unittest discover -s "$root/test/python" ;;
  *)
    echo "version-stage.sh: unknown step '$step'" >&2
    exit 2 ;;
esac
