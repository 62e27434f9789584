#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs offload-io's Debian packages with apt into a clean Debian root
# (debootstrap --variant=minbase, cached once outside the repository and
# copied afresh for every check), then builds the README's first program
# there with the commands the -dev package's README.Debian gives, against
# /usr, and runs it with no LD_LIBRARY_PATH: it must print "first: ok" and
# our host plugin must say it served the program (OFFLOADIO_INFO). Then the
# same for the Python package with the distribution's python3.
#
#   deb-install-check.sh SUITE LLVM DEB...
#     SUITE  the distribution the packages were built on (bookworm, trixie)
#     LLVM   the LLVM version they serve (clang-LLVM compiles the program)
# Needs root and Debian's registry.
set -euo pipefail
root_repo=$(cd "$(dirname "$0")/../.." && pwd)
suite=${1:?usage: deb-install-check.sh SUITE LLVM DEB...}
llvm=${2:?usage: deb-install-check.sh SUITE LLVM DEB...}
shift 2
(($# > 0)) || { echo "usage: deb-install-check.sh SUITE LLVM DEB..." >&2; exit 2; }
mirror=${OFFLOADIO_DEBIAN_MIRROR:-http://deb.debian.org/debian}
base=${OFFLOADIO_CLEAN_ROOT_CACHE:-/var/cache/offload-io}/clean-$suite
die() {
  echo "deb-install-check: $*" >&2
  exit 1
}
[[ $(id -u) == 0 ]] || die "needs root (debootstrap, chroot)"
export DEBIAN_FRONTEND=noninteractive
if ! command -v debootstrap >/dev/null; then
  apt-get update -q && apt-get install -y -q --no-install-recommends debootstrap
fi
if [[ ! -x $base/usr/bin/apt-get ]]; then
  echo "deb-install-check: debootstrap $suite into $base"
  rm -rf "$base.partial"
  mkdir -p "$(dirname "$base")"
  debootstrap --variant=minbase "$suite" "$base.partial" "$mirror" >"$base.log" 2>&1 ||
    { tail -20 "$base.log" >&2; die "debootstrap failed (log: $base.log)"; }
  mv "$base.partial" "$base"
fi

work=$(mktemp -d /var/tmp/offload-io-debcheck.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
cp -a "$base" "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/tmp/debs" "$root/tmp/first"
cp "$@" "$root/tmp/debs/"

# The README's first program, as the README writes it.
awk '/^## A first program/ { s = 1 } s && /^## / && !/A first program/ { exit }
  s && $0 == "```c" { b = 1; next } b && /^```/ { exit } b { print }' \
  "$root_repo/README.md" >"$root/tmp/first/first.c"
[[ -s $root/tmp/first/first.c ]] || die "no C block under '## A first program' in README.md"

in_root() {
  unshare --mount --propagation private bash -c '
    set -e
    mount --rbind /proc "$0/proc"
    mount --rbind /dev "$0/dev"
    exec chroot "$0" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
      PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"' "$root" "$@"
}
echo "deb-install-check: apt-get install $(cd "$root/tmp/debs" && echo *.deb) clang-$llvm into a clean $suite"
in_root sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends \
  /tmp/debs/*.deb clang-$llvm clang-tools-$llvm pkgconf python3 python3-numpy" >"$work/install.log" 2>&1 ||
  { tail -20 "$work/install.log" >&2; die "apt-get install failed"; }

# The -dev package's own instructions.
readme=$root/usr/share/doc/offload-io-dev/README.Debian
[[ -f $readme ]] || die "offload-io-dev has no README.Debian"
awk '$0 == "```sh" { b = 1; next } b && /^```/ { exit } b { print }' "$readme" \
  >"$root/tmp/first/commands.sh"
[[ -s $root/tmp/first/commands.sh ]] || die "README.Debian has no sh block"
echo "deb-install-check: building and running the first program as README.Debian says"
if ! in_root env OFFLOADIO_INFO=1 bash -ec 'cd /tmp/first && . ./commands.sh' \
  >"$work/first.out" 2>&1; then
  sed 's/^/  | /' "$work/first.out" >&2
  die "the first program failed"
fi
grep -q '^first: ok' "$work/first.out" ||
  { sed 's/^/  | /' "$work/first.out" >&2; die "no 'first: ok'"; }
grep -q '^offload-io(x86_64)' "$work/first.out" ||
  { sed 's/^/  | /' "$work/first.out" >&2; die "our host plugin did not serve the program"; }
echo "deb-install-check: ok ($(grep '^first:' "$work/first.out"); $(grep -c '^offload-io(x86_64)' "$work/first.out") lines of our host plugin, no LD_LIBRARY_PATH)"

# The installed Python package: it loads our plugins from /usr, with no
# LD_LIBRARY_PATH or PYTHONPATH, and reads a file into a NumPy array and
# into memory of our host plugin's device 0.
cat >"$root/tmp/first/first.py" <<'EOP'
import os, numpy, offload_io
path = "/tmp/first/data.bin"
with open(path, "wb") as f:
    f.write(bytes(range(256)) * 16)
host = numpy.zeros(4096, dtype=numpy.uint8)
with open(path, "rb") as f:
    assert offload_io.pread(f, host) == 4096
    assert offload_io.describe_device(0) == ("x86_64", 0), offload_io.describe_device(0)
    with offload_io.DeviceBuffer(4096, 0) as dev:
        assert offload_io.pread(f, dev) == 4096
        assert (numpy.asarray(dev) == host).all()
assert bytes(host) == bytes(range(256)) * 16
print("python: ok")
EOP
if ! in_root env OFFLOADIO_INFO=1 python3 /tmp/first/first.py >"$work/python.out" 2>&1; then
  sed 's/^/  | /' "$work/python.out" >&2
  die "the Python package failed"
fi
grep -q '^python: ok' "$work/python.out" && grep -q '^offload-io(x86_64)' "$work/python.out" ||
  { sed 's/^/  | /' "$work/python.out" >&2; die "offload_io did not run on our host plugin"; }
echo "deb-install-check: ok (python3 with offload_io: read into NumPy and into device 0 of our host plugin, no LD_LIBRARY_PATH)"
