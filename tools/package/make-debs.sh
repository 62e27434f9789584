#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Debian packages of one build: offload-io (the plugins, the
# plugin loader, libompx_io, the tools, their man page and completion, the
# Python package offload_io, the documentation) and offload-io-dev (headers, the CMake and pkg-config
# packages, the link-time names), both for the libomptarget the build serves,
# installed under /usr. Run it on the distribution the build was made on
# (bookworm for LLVM 16; trixie, in its root, for 17 and 18): the packages'
# dependencies are that distribution's, computed by dpkg-shlibdeps.
#
#   make-debs.sh [OUT_DIR]    (default dist/; OFFLOADIO_BUILD_DIR: the build)
#
# Prints the paths of the two packages.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${OFFLOADIO_BUILD_DIR:-$root/build}
out=${1:-$root/dist}
die() {
  echo "make-debs: $*" >&2
  exit 1
}
for tool in dpkg-deb dpkg-shlibdeps strip; do
  command -v $tool >/dev/null || die "$tool is missing (apt-get install dpkg-dev)"
done
[[ -f $build/CMakeCache.txt ]] || die "$build is not a build (tools/build.sh makes one)"
llvm=$(sed -n 's/^LLVM_DIR:[A-Z]*=.*llvm-\([0-9]*\).*/\1/p' "$build/CMakeCache.txt")
[[ -n $llvm ]] || die "cannot tell the LLVM of $build from its LLVM_DIR"
project_version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[[ -n $project_version ]] || project_version=$(sed -n 's/^project(offload-io VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
version="$project_version+llvm$llvm"
arch=$(dpkg --print-architecture)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/stage
DESTDIR=$stage cmake --install "$build" --prefix /usr >"$work/install.log" 2>&1 ||
  die "cmake --install failed: $(tail -5 "$work/install.log")"

# The split: what a program needs at run time, and what building one needs.
runtime=$work/offload-io
dev=$work/offload-io-dev
mkdir -p "$runtime" "$dev"
move() {
  local pkg=$1 path
  shift
  for path in "$@"; do
    [[ -e $stage/$path || -L $stage/$path ]] || continue
    mkdir -p "$pkg/$(dirname "$path")"
    mv "$stage/$path" "$pkg/$path"
  done
}
cd "$stage"
libdir=$(dirname "$(find usr -name 'libompx_io.so.1' | head -n1)")
[[ -n $libdir && $libdir != . ]] || die "no libompx_io.so.1 in the install of $build"
move "$dev" usr/include "$libdir/libompx_io.so" "$libdir/liboffloadio_plugins.so" \
  "$libdir/cmake" "$libdir/pkgconfig"
move "$runtime" usr
cd - >/dev/null
leftover=$(find "$stage" -mindepth 1 -not -type d | head -n1)
[[ -z $leftover ]] || die "installed file in neither package: ${leftover#$stage/}"

for pkg in "$runtime" "$dev"; do
  name=$(basename "$pkg")
  mkdir -p "$pkg/usr/share/doc/$name"
  {
    echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
    echo "Upstream-Name: offload-io"
    echo
    echo "Files: *"
    echo "License: Apache-2.0"
    echo " On Debian systems the full text is in /usr/share/common-licenses/Apache-2.0."
  } >"$pkg/usr/share/doc/$name/copyright"
done

sed "s/@LLVM@/$llvm/g" "$root/tools/package/README.Debian.in" \
  >"$dev/usr/share/doc/offload-io-dev/README.Debian"

# Packages carry no debug information.
while IFS= read -r -d '' f; do
  if head -c4 "$f" | grep -q ELF; then
    strip --strip-unneeded "$f" || die "strip $f failed"
  fi
done < <(find "$runtime" "$dev" -type f -print0)

# The runtime's dependencies from what its ELF files link; the tools link
# libomptarget.so.N, which libomp5-N (libomp5-N t64 on trixie) ships.
# Our own libraries are the package's: shlibs.local says so, and the
# DEBIAN directory marks the tree's root, where $ORIGIN RUNPATHs point.
mkdir -p "$work/shlibs/debian" "$runtime/DEBIAN"
printf 'Source: offload-io\n\nPackage: offload-io\nArchitecture: any\n' >"$work/shlibs/debian/control"
printf 'libompx_io 1 offload-io (>= %s)\nliboffloadio_plugins 1 offload-io (>= %s)\n' \
  "$version" "$version" >"$work/shlibs/debian/shlibs.local"
mapfile -t elves < <(find "$runtime" -type f -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print)
# Libraries found through /usr/lib/llvm-N/lib, the plugins' RUNPATH, are
# development symlinks there: name the package of the file they point to.
for needed in $(for f in "${elves[@]}"; do readelf -d "$f"; done |
  sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u); do
  [[ -e /usr/lib/llvm-$llvm/lib/$needed ]] || continue
  real=$(readlink -f "/usr/lib/llvm-$llvm/lib/$needed")
  owner=$(dpkg -S "$real" 2>/dev/null | head -n1 | cut -d: -f1) || true
  [[ -n $owner ]] || die "no package owns $real ($needed)"
  [[ $needed =~ ^(.*)\.so\.(.*)$ ]] || continue
  echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} $owner" >>"$work/shlibs/debian/shlibs.local"
done
(cd "$work/shlibs" && dpkg-shlibdeps -O -l"$runtime/$libdir" \
  -xoffload-io "${elves[@]}" 2>"$work/shlibdeps.log") >"$work/shlibs.out" ||
  die "dpkg-shlibdeps failed: $(cat "$work/shlibdeps.log")"
depends=$(sed -n 's/^shlibs:Depends=//p' "$work/shlibs.out")
[[ -n $depends ]] || die "dpkg-shlibdeps found no dependencies: $(cat "$work/shlibdeps.log")"

control() {
  local pkg=$1 name=$2 depends=$3 description=$4
  local size
  size=$(du -sk "$pkg" | cut -f1)
  mkdir -p "$pkg/DEBIAN"
  cat >"$pkg/DEBIAN/control" <<EOC
Package: $name
Version: $version
Architecture: $arch
Maintainer: offload-io <offload-io@localhost>
Installed-Size: $size
Depends: $depends
Section: libs
Priority: optional
Homepage: https://github.com/offload-io/offload-io
Description: $description
EOC
}
control "$runtime" offload-io "$depends" \
  "OpenMP offload plugins and file <-> device API for libomptarget $llvm
 Drop-in plugins for LLVM $llvm's libomptarget (host, NVIDIA GPUs through the
 CUDA driver, AMD GPUs through HSA) with real pinning of locked memory and
 fast copies, and libompx_io, which reads and writes files straight into
 device memory. Programs get these plugins by linking liboffloadio_plugins
 or libompx_io (offload-io-dev); Python programs import offload_io."
control "$dev" offload-io-dev "offload-io (= $version), libomp-$llvm-dev" \
  "OpenMP offload plugins and file <-> device API: development files
 Headers (ompx_io.h and the others), the CMake package
 (find_package(offload-io)) and the pkg-config files (offload-io,
 offload-io-plugins) for building OpenMP offload programs with clang-$llvm
 against offload-io."
sed -i "s/^Depends: \(.*\)\$/Depends: \1\nRecommends: clang-$llvm, clang-tools-$llvm, pkgconf/" "$dev/DEBIAN/control"
# The Python package (offload_io) needs python3, and NumPy for host arrays.
sed -i "s/^Depends: \(.*\)\$/Depends: \1\nSuggests: python3, python3-numpy/" "$runtime/DEBIAN/control"
(cd "$runtime" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | sort |
  xargs md5sum >DEBIAN/md5sums)
# libompx_io and the loader are shared libraries others link: ldconfig runs
# on install (the trigger, as debhelper's would).
echo "activate-noawait ldconfig" >"$runtime/DEBIAN/triggers"

mkdir -p "$out"
for pkg in "$runtime" "$dev"; do
  name=$(basename "$pkg")
  deb="$out/${name}_${version}_$arch.deb"
  dpkg-deb --root-owner-group --build "$pkg" "$deb" >/dev/null
  echo "$deb"
done
