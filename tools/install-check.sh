#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs a build into a temporary prefix and uses it as an application
# would: builds examples/consumer against the installed tree twice, through
# find_package(offload-io) and through pkg-config, and runs both with no
# LD_LIBRARY_PATH. Each run must pass the program's own checks (a file read
# into device memory, a locked buffer, both answered by our plugin) and our
# plugins must be the ones loaded. Two more runs: the pkg-config build with
# the LLVM library directory, where the stock plugins are, first in
# LD_LIBRARY_PATH (ours must still win), and a control built with a plain
# rpath to the prefix and no offload-io-plugins, which must get the stock
# plugins and fail the program's checks (docs/install.md says why).
#
#   OFFLOADIO_BUILD_DIR   the build to install (default build/)
#   OFFLOADIO_KEEP_PREFIX 1: keep the temporary directory and say where
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${OFFLOADIO_BUILD_DIR:-$root/build}
llvm_lib=/usr/lib/llvm-16/lib
keep=${OFFLOADIO_KEEP_PREFIX:-0}
if [[ $keep != 0 && $keep != 1 ]]; then
  echo "install-check: OFFLOADIO_KEEP_PREFIX must be 0 or 1, not '$keep'" >&2
  exit 2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/offload-io-install.XXXXXX")
if ((keep)); then
  echo "install-check: keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
prefix=$(realpath "$prefix")
for f in lib/libomptarget.rtl.x86_64.nextgen.so lib/liboffloadio_plugins.so.1 \
         lib/libompx_io.so.1 lib/cmake/offload-io/offload-ioConfig.cmake \
         lib/pkgconfig/offload-io.pc lib/pkgconfig/offload-io-plugins.pc \
         include/ompx_io.h bin/ompx-io share/doc/offload-io/LICENSE \
         share/doc/offload-io/install.md; do
  if [[ ! -e $prefix/$f ]]; then
    echo "install-check: $f is not installed in $prefix" >&2
    exit 1
  fi
done
echo "install-check: installed into $prefix"

echo "install-check: building examples/consumer with find_package(offload-io)"
cmake -S "$root/examples/consumer" -B "$work/cmake" -G Ninja \
  -DCMAKE_C_COMPILER=clang-16 -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log"
ninja -C "$work/cmake" >>"$work/cmake.log"

echo "install-check: building examples/consumer through pkg-config"
PKG_CONFIG_PATH=$prefix/lib/pkgconfig \
  bash "$root/examples/consumer/build-pkg-config.sh" "$work/consumer-pc"

echo "install-check: building with -lompx_io alone (a plain rpath, no plugins package)"
clang-16 -O2 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -I"$prefix/include" \
  "$root/examples/consumer/consumer.c" -o "$work/consumer-rpath" \
  -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lompx_io

echo "install-check: building a control against the build tree's libompx_io, which brings no plugins"
clang-16 -O2 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -I"$prefix/include" \
  "$root/examples/consumer/consumer.c" -o "$work/consumer-control" \
  -L"$build/lib" -Wl,-rpath,"$build/lib" -lompx_io

# run NAME EXPECT PROGRAM [VAR=VALUE...]: runs PROGRAM with no
# LD_LIBRARY_PATH (plus the given variables). EXPECT=ours: it must pass,
# with our x86_64 plugin loaded and every nextgen plugin from the prefix
# (libomptarget also loads the stock non-nextgen cuda and amdgpu plugins
# when ours of that name find no device, as it does with LD_LIBRARY_PATH);
# EXPECT=stock: it must fail, with only plugins of the LLVM library directory
# loaded.
failures=0
runs=0
run() {
  local name=$1 expect=$2 program=$3 rc=0 plugins verdict=ok
  local out=$work/run$((++runs)).out
  shift 3
  env -u LD_LIBRARY_PATH "$@" "$program" >"$out" 2>&1 || rc=$?
  plugins=$(sed -n 's/^plugin: //p' "$out" | xargs -r realpath)
  if [[ $expect == ours ]]; then
    if ((rc != 0)) || ! grep -q '^consumer: OK' "$out"; then
      verdict="exit status $rc, no OK line"
    elif ! grep -qx "$prefix/lib/libomptarget.rtl.x86_64.nextgen.so" <<<"$plugins"; then
      verdict="our x86_64 plugin is not loaded"
    elif grep "nextgen" <<<"$plugins" | grep -qv "^$prefix/lib/"; then
      verdict="a nextgen plugin not from $prefix/lib"
    fi
  elif ((rc == 0)); then
    verdict="passed, although no offload-io plugin should be loaded"
  elif [[ -z $plugins ]] || grep -qv "^$llvm_lib/" <<<"$plugins"; then
    verdict="failed, but not on the stock plugins of $llvm_lib"
  fi
  if [[ $verdict == ok ]]; then
    echo "install-check: $name: ok (exit $rc; ${plugins//$'\n'/, })"
  else
    echo "install-check: $name: FAILED: $verdict; its output:" >&2
    sed 's/^/  | /' "$out" >&2
    failures=$((failures + 1))
  fi
}
run find_package ours "$work/cmake/consumer"
run pkg-config ours "$work/consumer-pc"
run "pkg-config, LD_LIBRARY_PATH=$llvm_lib" ours "$work/consumer-pc" \
  LD_LIBRARY_PATH=$llvm_lib
run "-lompx_io alone, plain rpath" ours "$work/consumer-rpath"
run "build tree's libompx_io (control)" stock "$work/consumer-control"
# The installed tool, from its own prefix: it names a device of ours.
runs=$((runs + 1))
if env -u LD_LIBRARY_PATH "$prefix/bin/ompx-io" info >"$work/info.out" 2>&1 &&
    grep -q 'offload-io x86_64 plugin' "$work/info.out"; then
  echo "install-check: installed ompx-io info: ok (our x86_64 plugin serves its devices)"
else
  echo "install-check: installed ompx-io info: FAILED; its output:" >&2
  sed 's/^/  | /' "$work/info.out" >&2
  failures=$((failures + 1))
fi
# The README's first program, compiled and run exactly as written there
# (the prefix in its commands replaced by this one), with no LD_LIBRARY_PATH.
readme_block() { # LANG: the first fenced block of LANG under "## A first program"
  awk -v lang="$1" '/^## A first program/ { s = 1 } s && /^## / && !/A first program/ { exit }
    s && $0 == "```" lang { b = 1; next } b && /^```/ { exit } b { print }' "$root/README.md"
}
mkdir -p "$work/first"
readme_block c >"$work/first/first.c"
readme_block sh | sed "s|/opt/offload-io|$prefix|g" >"$work/first/commands.sh"
runs=$((runs + 1))
if ! [[ -s $work/first/first.c && -s $work/first/commands.sh ]]; then
  echo "install-check: README first program: FAILED: no c or sh block found" >&2
  failures=$((failures + 1))
elif (cd "$work/first" && env -u LD_LIBRARY_PATH bash -e commands.sh) \
    >"$work/first/out" 2>&1 && grep -q '^first: ok' "$work/first/out"; then
  echo "install-check: README first program: ok ($(grep '^first:' "$work/first/out"))"
else
  echo "install-check: README first program: FAILED; its output:" >&2
  sed 's/^/  | /' "$work/first/out" >&2
  failures=$((failures + 1))
fi
if ((failures)); then
  echo "install-check: $failures of $runs runs failed" >&2
  exit 1
fi
echo "install-check: all $runs runs as expected"
