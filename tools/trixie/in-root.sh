#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a command inside the trixie root of make-root.sh, with this checkout
# (and /var/cache/offload-io, where the LLVM suites are cached) at the same
# paths as outside, /proc, /sys and /dev mounted, in a private mount
# namespace so that nothing stays mounted when the command ends.
#
#   in-root.sh COMMAND...      (run from anywhere in the checkout)
set -euo pipefail
root=${OFFLOADIO_TRIXIE_ROOT:-/var/cache/offload-io/trixie}
repo=$(cd "$(dirname "$0")/../.." && pwd)
if [[ ! -f $root/.offload-io-packages ]]; then
  echo "in-root: no trixie root at $root; run tools/trixie/make-root.sh first" >&2
  exit 1
fi
if (($# == 0)); then
  echo "usage: in-root.sh COMMAND..." >&2
  exit 2
fi
cache=/var/cache/offload-io
mkdir -p "$root$repo" "$root$cache" "$root/proc" "$root/sys" "$root/dev"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# Each argument is passed through quoted, so spaces survive the inner shell.
printf -v cmd '%q ' "$@"
exec unshare --mount --propagation private bash -c "
  set -e
  mount --bind '$repo' '$root$repo'
  mount --rbind /proc '$root/proc'
  mount --rbind /sys '$root/sys'
  mount --rbind /dev '$root/dev'
  mount --bind '$cache' '$root$cache'
  if [[ -d /usr/local/cuda ]]; then mkdir -p '$root/usr/local/cuda' && mount --bind -o ro /usr/local/cuda '$root/usr/local/cuda'; fi
  exec chroot '$root' /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/lib/ccache:/usr/sbin:/usr/bin:/sbin:/bin CCACHE_DIR=/root/.ccache \
    ${OFFLOADIO_IN_ROOT_ENV:-} bash -c 'cd \"\$0\" && exec $cmd' '$PWD'"
