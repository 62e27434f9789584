#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian bookworm packages offload-io needs to build and test.
# Run as root on a fresh machine; quick when everything is already there.
set -euo pipefail
# libclang-rt-16-dev: the sanitizer runtimes of tools/test.sh's ASan+UBSan
# and TSan builds, and libFuzzer (docs/fuzzing.md).
# dpkg-dev and xz-utils: tools/llvm-suite/fetch.sh, which takes LLVM's
# libomptarget tests from Debian's llvm-toolchain-16 source package
# (apt-get source) and unpacks them from its .tar.xz.
# pkgconf: pkg-config, with which tools/install-check.sh builds
# examples/consumer against the installed tree.
# openmpi-bin and libopenmpi-dev: examples/mpi and the mpi stage of
# tools/test.sh (several ranks on one node, docs/mpi.md).
# python3-numpy: the Python package's tests (test/python).
PKGS=(clang-16 clang-tools-16 libomp-16-dev llvm-16-dev llvm-16-tools lld-16
      libhsa-runtime-dev rocm-device-libs libffi-dev googletest libgtest-dev
      libclang-rt-16-dev cmake ninja-build python3 gnuplot-nox dpkg-dev xz-utils
      pkgconf openmpi-bin libopenmpi-dev python3-numpy)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) != 0 ]]; then
    echo "install-deps: need root to install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
