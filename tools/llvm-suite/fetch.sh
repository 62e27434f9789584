#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches LLVM's own libomptarget test suite (openmp/libomptarget/test) of
# LLVM 16, 17 or 18 from Debian's llvm-toolchain-<version> source package
# (bookworm's for 16, trixie's for 17 and 18: run it where apt knows that
# release, e.g. inside tools/trixie/in-root.sh) into a cache outside the
# repository, and prints the path of that test directory on stdout
# (progress goes to stderr). Quick and offline when the cache already holds
# the tree for the version.
#
#   fetch.sh [--llvm VERSION] [CACHE_DIR]
#
#   --llvm VERSION  16, 17 or 18; default $OFFLOADIO_LLVM_VERSION, else 16
#   CACHE_DIR, else OFFLOADIO_LLVM_SUITE_CACHE
#                   default /var/cache/offload-io/llvm<VERSION>-suite
#   OFFLOADIO_LLVM_SUITE_VERSION
#                   source package version; default: the source version of
#                   the installed libomp5-<VERSION> (the libomptarget the
#                   tests run against), else the one tools/llvm-suite/
#                   version.sh names
#   OFFLOADIO_LLVM_SOURCE_DIR
#                   a folder that may already hold the package's
#                   .orig.tar.* (default /var/cache/offload-io/trixie/src/
#                   <VERSION>, where the trixie root keeps it): used when its
#                   SHA256 is the one apt's signed index gives, instead of
#                   downloading it
#
# Needs root the first time: when apt has no deb-src entry for the release's
# main it writes /etc/apt/sources.list.d/offloadio-deb-src.sources, with the
# URIs and Signed-By keyring of the machine's own deb entry for it, and
# updates that source's index. The upstream tarball's name, location and
# SHA256 come from that signed index (apt-get source --print-uris; the .dsc
# itself is not needed, and trixie's mirror may not serve it), and apt's
# apt-helper downloads it and checks the SHA256. Only the test directory is
# unpacked from the tarball (it needs nothing else of the tree); a
# downloaded tarball is not kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/llvm-suite/version.sh
source "$here/version.sh"
llvm=${OFFLOADIO_LLVM_VERSION:-16}
if [[ ${1:-} == --llvm ]]; then
  llvm=${2:?fetch.sh: --llvm needs a version}
  shift 2
fi
llvm_suite_facts "$llvm"
pkg=$llvm_pkg
suite=$llvm_dist
cache=${1:-${OFFLOADIO_LLVM_SUITE_CACHE:-/var/cache/offload-io/llvm$llvm-suite}}
version=${OFFLOADIO_LLVM_SUITE_VERSION:-$(dpkg-query -W -f='${source:Version}' "$llvm_runtime" 2>/dev/null || true)}
version=${version:-$llvm_default_version}
source_dir=${OFFLOADIO_LLVM_SOURCE_DIR:-/var/cache/offload-io/trixie/src/$llvm}
src_list=/etc/apt/sources.list.d/offloadio-deb-src.sources
# The epoch's colon stays out of the directory name.
dest=$cache/${pkg}_${version#*:}
tests=$dest/openmp/libomptarget/test

say() { echo "fetch.sh: $*" >&2; }

if [[ -e $dest/.complete ]]; then
  echo "$tests"
  exit 0
fi
mkdir -p "$cache"
# Two runs at once (two checkouts on one machine) fetch once.
exec 9>"$cache/.lock"
flock 9
if [[ -e $dest/.complete ]]; then
  echo "$tests"
  exit 0
fi

# entry_of TYPE: "FILE:N" of apt's first TYPE (deb, deb-src) entry for
# $suite main, N being the stanza (deb822) or the line (one-line format);
# empty when there is none. Read from the sources lists alone.
entry_of() {
  # shellcheck disable=SC2016 # $(...) is apt's --format placeholder
  apt-get indextargets --no-release-info --format '$(SOURCESENTRY)' "Target-Of: $1" \
    "Release: $suite" 'Component: main' | head -n1
}

# downloaded TYPE: the index of that entry is in apt's lists (apt only shows
# a target with its release information once it has downloaded it).
downloaded() {
  # shellcheck disable=SC2016 # $(...) is apt's --format placeholder
  [[ -n $(apt-get indextargets --format '$(FILENAME)' "Target-Of: $1" "Release: $suite" \
    'Component: main' | head -n1) ]]
}

# deb822_stanza FILE N: stanza N of a deb822 sources file, without comment
# lines, counted as apt counts them (paragraphs of comments only are none).
deb822_stanza() {
  awk -v n="$2" '
    BEGIN { RS = ""; FS = "\n" }
    {
      body = ""
      for (i = 1; i <= NF; i++) if ($i !~ /^#/) body = body $i "\n"
      if (body !~ /[^ \t\n]/) next
      if (++k == n) { printf "%s", body; exit }
    }' "$1"
}

# deb822_field KEY < STANZA: the value of KEY with its continuation lines
# (Signed-By may hold an inline key block); keys are case-insensitive.
deb822_field() {
  awk -v key="$1" '
    tolower($0) ~ "^" tolower(key) ":" { on = 1; sub(/^[^:]*:[ \t]*/, ""); print; next }
    /^[ \t]/ && on { print; next }
    { on = 0 }'
}

# add_deb_src: writes $src_list from the deb entry for $suite main.
add_deb_src() {
  local entry file n uris signed_by
  entry=$(entry_of deb)
  if [[ -z $entry ]]; then
    say "apt has no deb entry for $suite main to copy a deb-src entry from"
    exit 1
  fi
  file=${entry%:*}
  n=${entry##*:}
  if [[ $file == *.sources ]]; then
    local stanza
    stanza=$(deb822_stanza "$file" "$n")
    uris=$(deb822_field URIs <<<"$stanza")
    signed_by=$(deb822_field Signed-By <<<"$stanza")
  else
    local line opts
    line=$(sed -n "${n}p" "$file")
    opts=$(sed -n 's/^[^[]*\[\([^]]*\)\].*/\1/p' <<<"$line")
    signed_by=$(tr ' ' '\n' <<<"$opts" | sed -n 's/^signed-by=//Ip')
    uris=$(sed -e 's/\[[^]]*\]//' <<<"$line" | awk '{ print $2 }')
  fi
  if [[ -z $uris ]]; then
    say "cannot read the URIs of $entry"
    exit 1
  fi
  if [[ $(id -u) != 0 ]]; then
    say "need root to add $src_list (apt has no deb-src entry for $suite main)"
    exit 1
  fi
  say "adding $src_list (from $entry)"
  {
    echo "# Written by offload-io tools/llvm-suite/fetch.sh: Debian sources, for"
    echo "# LLVM's libomptarget tests. Same mirror and keyring as $entry."
    echo "Types: deb-src"
    echo "URIs: $uris"
    echo "Suites: $suite"
    echo "Components: main"
    if [[ -n $signed_by ]]; then
      echo "Signed-By: $signed_by"
    fi
  } >"$src_list"
}

work=$(mktemp -d "$cache/fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/dl" "$work/x" "$work/no-parts"

added=0
if [[ -z $(entry_of deb-src) ]]; then
  add_deb_src
  added=1
fi
# A deb-src entry someone else added may never have been updated either.
if ((added)) || ! downloaded deb-src; then
  say "apt-get update (the deb-src entry for $suite main only)"
  # Only that entry's file: the other lists stay as they are.
  deb_src_entry=$(entry_of deb-src)
  apt-get update -q -o Dir::Etc::SourceList="${deb_src_entry%:*}" \
    -o Dir::Etc::SourceParts="$work/no-parts" -o APT::Get::List-Cleanup=0 >&2
fi

# The upstream tarball as the signed index names it: 'URI' FILE SIZE SHA256:...
say "apt-get source --print-uris $pkg=$version"
uri_line=$(apt-get source -q --print-uris "$pkg=$version" 2>/dev/null |
  grep -E "^'[^']*/${pkg}_[^/']*\.orig\.tar\.[a-z0-9]+' " | head -n1 || true)
if [[ -z $uri_line ]]; then
  say "apt's index has no upstream tarball of $pkg=$version"
  exit 1
fi
read -r uri file _ hash <<<"$uri_line"
uri=${uri//\'/}
if [[ $hash != SHA256:* ]]; then
  say "apt gives no SHA256 for $file ($hash)"
  exit 1
fi
orig=$work/dl/$file
if [[ -f $source_dir/$file ]] &&
  [[ $(sha256sum "$source_dir/$file" | cut -d' ' -f1) == "${hash#SHA256:}" ]]; then
  say "using $source_dir/$file (SHA256 as apt's index says)"
  orig=$source_dir/$file
else
  # apt downloads as its unprivileged _apt user when that user may write here.
  if id _apt >/dev/null 2>&1; then
    chown _apt "$work/dl"
  fi
  say "downloading $uri"
  /usr/lib/apt/apt-helper -q download-file "$uri" "$orig" "$hash" >&2
fi
say "unpacking */openmp/libomptarget/test from $(basename "$orig")"
tar -xf "$orig" -C "$work/x" --wildcards '*/openmp/libomptarget/test'
found=("$work"/x/*/openmp/libomptarget/test)
if [[ ! -e ${found[0]}/lit.cfg ]]; then
  say "no openmp/libomptarget/test/lit.cfg in $orig"
  exit 1
fi
rm -rf "$dest"
mkdir -p "$work/out/openmp/libomptarget"
mv "${found[0]}" "$work/out/openmp/libomptarget/test"
echo "$version" >"$work/out/.complete"
mv "$work/out" "$dest"
echo "$tests"
