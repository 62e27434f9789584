#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds (once) a Debian trixie root with LLVM 17 and 18, libomptarget 17/18,
# lit and trixie's HSA runtime and ROCm device libraries, in which
# tools/trixie/in-root.sh builds and tests offload-io for those LLVM versions.
# The root is cached outside the repository (OFFLOADIO_TRIXIE_ROOT, by default
# /var/cache/offload-io/trixie) and built when missing; when the package list
# below changes, an existing root gets the packages it lacks installed (no
# new debootstrap). Needs root and Debian's registry.
set -euo pipefail
root=${OFFLOADIO_TRIXIE_ROOT:-/var/cache/offload-io/trixie}
mirror=${OFFLOADIO_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# clang-tools-N: clang-offload-packager, without which -fopenmp-targets fails.
# rocm-device-libs-17: the amdgcn bitcode libraries clang-17/18 link against.
# googletest: the unit tests; libffi-dev: the host plugin's kernel calls.
# python3-safetensors, python3-numpy: the reference implementation that
# safetensors-compat.sh checks libompx_io's safetensors reader against.
# libomp 17 and 18 cannot be installed together (both packages claim
# libomp.so.5 and conflict), so 18 is installed and 17's OpenMP runtime is
# unpacked into /usr/lib/llvm-17 alone (OMP17_PKGS), which is all clang-17
# and programs built for LLVM 17 use.
PKGS=(clang-17 clang-tools-17 llvm-17-dev llvm-17-tools lld-17
      clang-18 clang-tools-18 libomp-18-dev llvm-18-dev llvm-18-tools lld-18
      libclang-rt-18-dev libhsa-runtime-dev rocm-device-libs-17
      libffi-dev googletest libgtest-dev cmake ninja-build python3 pkgconf
      dpkg-dev xz-utils ccache ca-certificates file
      python3-safetensors python3-numpy)
OMP17_PKGS=(libomp5-17t64 libomp-17-dev)
stamp="$root/.offload-io-packages"
want=$(printf '%s\n' "${PKGS[@]}" "${OMP17_PKGS[@]}" | sha256sum | cut -d' ' -f1)
if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
  echo "trixie root: $root (up to date)"
  exit 0
fi
if [[ $(id -u) != 0 ]]; then
  echo "make-root: building $root needs root" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if ! command -v debootstrap >/dev/null; then
  apt-get update -q && apt-get install -y -q --no-install-recommends debootstrap
fi
if [[ ! -x $root/usr/bin/apt-get ]]; then
  echo "trixie root: debootstrap into $root"
  rm -rf "$root.partial"
  mkdir -p "$(dirname "$root")"
  debootstrap --variant=minbase trixie "$root.partial" "$mirror" > "$root.debootstrap.log" 2>&1 ||
    { tail -20 "$root.debootstrap.log" >&2; echo "make-root: debootstrap failed (log: $root.debootstrap.log)" >&2; exit 1; }
  mv "$root.partial" "$root"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
echo "trixie root: installing ${#PKGS[@]} packages"
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
  sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends $(printf '%s ' "${PKGS[@]}")" \
  > "$root.install.log" 2>&1 ||
  { tail -20 "$root.install.log" >&2; echo "make-root: apt-get install in $root failed (log: $root.install.log)" >&2; exit 1; }
echo "trixie root: unpacking ${OMP17_PKGS[*]} into /usr/lib/llvm-17"
chroot "$root" sh -c "rm -rf /tmp/omp17 && mkdir -p /tmp/omp17/x && cd /tmp/omp17 &&
  apt-get download -q $(printf '%s ' "${OMP17_PKGS[@]}") && for f in *.deb; do dpkg -x \$f x; done &&
  cp -a x/usr/lib/llvm-17/. /usr/lib/llvm-17/ && rm -rf /tmp/omp17" >> "$root.install.log" 2>&1 ||
  { tail -20 "$root.install.log" >&2; echo "make-root: unpacking LLVM 17's OpenMP runtime failed (log: $root.install.log)" >&2; exit 1; }
chroot "$root" apt-get clean
echo "$want" > "$stamp"
echo "trixie root: $root (built)"
