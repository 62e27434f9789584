#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Packs what an OpenMP offload program built with clang-N needs at run time
# on the NVIDIA machine (libomptarget N, libomp, libLLVM-N and the libraries
# they load), and with --toolchain clang-N, the offload tools, the OpenMP
# headers and nvptx64 device runtime, lit, FileCheck and not, so that lit
# suites compile and run there. For N = 17 or 18 run it inside the trixie
# root (tools/trixie/in-root.sh); the NVIDIA machine's Ubuntu 24.04 has the
# glibc and libstdc++ these need. LLVM 16 has its own packer
# (shared/device/pack-llvm16-runtime.sh).
#
#   pack-llvm-runtime.sh N OUT.tar.xz [--toolchain]
# There: mkdir -p /opt/llvmN && tar xJf OUT.tar.xz -C /opt/llvmN, then
#   LD_LIBRARY_PATH=/opt/llvmN/lib, /opt/llvmN/bin/clang-N, python3 /opt/llvmN/lit/lit.py
set -euo pipefail
version=${1:?usage: pack-llvm-runtime.sh N OUT.tar.xz [--toolchain]}
out=${2:?usage: pack-llvm-runtime.sh N OUT.tar.xz [--toolchain]}
tool=${3:-}
L=/usr/lib/llvm-$version
if [[ ! -d $L/lib ]]; then
  echo "pack-llvm-runtime: $L not found (LLVM $version not installed here)" >&2
  exit 1
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/bin"
# libomptarget's and the plugins' versioned files (.so.17, .so.18.1).
shopt -s nullglob
libs=("$L/lib/libLLVM-$version.so.1" "$L/lib/libomp.so.5")
for f in "$L"/lib/libomptarget.so.* "$L"/lib/libomptarget.rtl.*.so.*; do libs+=("$f"); done
# packLib FILE: copies FILE under its own name, or links that name to the
# copy already made of the same file (libLLVM is loaded by two names).
declare -A packed
packLib() {
  local real name
  real=$(realpath "$1")
  name=$(basename "$1")
  [[ -e $stage/lib/$name ]] && return 0
  if [[ -n ${packed[$real]:-} ]]; then
    ln -s "${packed[$real]}" "$stage/lib/$name"
  else
    cp -L "$1" "$stage/lib/$name"
    packed[$real]=$name
  fi
}
# packDeps FILE...: the libraries these load that the machine may lack or
# have in another version; the C and C++ runtimes are the machine's own.
packDeps() {
  local dep
  for dep in $(ldd "$@" | awk '/=> \//{print $3}' | sort -u); do
    case $(basename "$dep") in
      libc.so*|libm.so*|libgcc_s.so*|libstdc++.so*|ld-linux*|libpthread*|libdl*|librt*) ;;
      *) packLib "$dep" ;;
    esac
  done
}
for f in "${libs[@]}"; do packLib "$f"; done
packDeps "${libs[@]}"
(cd "$stage/lib" &&
  for f in libomptarget.so.* libomptarget.rtl.*.so.*; do ln -sf "$f" "${f%%.so.*}.so"; done &&
  ln -sf libomp.so.5 libomp.so)
if [[ $tool == --toolchain ]]; then
  packDeps "$L/bin/clang-$version"
  for b in "clang-$version" clang-offload-packager clang-linker-wrapper FileCheck not count; do
    cp -L "$L/bin/$b" "$stage/bin/"
  done
  (cd "$stage/bin" && ln -sf "clang-$version" clang && ln -sf "clang-$version" clang++)
  mkdir -p "$stage/lib/clang/$version"
  cp -rL "$L/lib/clang/$version/include" "$stage/lib/clang/$version/"
  cp -L "$L"/lib/libomptarget-nvptx-sm_{70,80,90}.bc "$L/lib/libomptarget.devicertl.a" "$stage/lib/"
  mkdir -p "$stage/lit"
  cp -r "$L/build/utils/lit/lit" "$L/build/utils/lit/lit.py" "$stage/lit/"
fi
tar -C "$stage" -cf - . | xz -T0 -6 > "$out"
ls -la "$out"
