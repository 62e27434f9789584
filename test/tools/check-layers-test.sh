#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# check-layers-test.sh CHECKER: tests tools/check-layers.sh on small trees
# in a temporary folder: a tree that keeps the layers passes, and each kind
# of violation fails with the file, the line and the layers named.
set -euo pipefail

checker=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# A tree whose includes keep the layers: base < io < device.
good_tree() {
  local t=$1
  mkdir -p "$t"/common/{base,io,device}/{include/offloadio,src} \
    "$t"/common/io/include/offloadio/io "$t"/include "$t"/libompx_io "$t"/plugin/x
  echo '#include "llvm/Support/Error.h"' >"$t/common/base/include/offloadio/Error.h"
  echo '#include "offloadio/Error.h"' >"$t/common/base/src/Error.cpp"
  echo '' >"$t/common/base/include/offloadio/StaticTLS.h"
  printf '#include "offloadio/Error.h"\n' >"$t/common/io/include/offloadio/io/Engine.h"
  printf '// io\n#include "offloadio/io/Engine.h"\n#include <vector>\n' >"$t/common/io/src/Engine.cpp"
  echo '' >"$t/common/io/include/offloadio/io/SysCalls.h"
  printf '#include "offloadio/Error.h"\n' >"$t/common/device/include/offloadio/Device.h"
  printf '#include "offloadio/io/Engine.h"\n#include "offloadio/Device.h"\n' \
    >"$t/common/device/include/offloadio/Plugin.h"
  echo '' >"$t/common/device/include/offloadio/ExtensionABI.h"
  printf '#include "offloadio/Device.h"\n#include "ompx_io.h"\n' >"$t/common/device/src/CApi.cpp"
  echo '' >"$t/include/ompx_io.h"
  echo '' >"$t/include/ompx_version.h.in"
  echo 'add_library(x)' >"$t/common/CMakeLists.txt"
  printf '#include "offloadio/ExtensionABI.h"\n#include "offloadio/io/SysCalls.h"\n#include "Local.h"\n' \
    >"$t/libompx_io/lib.cpp"
  printf '#include "offloadio/Device.h"\n' >"$t/plugin/x/Plugin.cpp"
}

# expect NAME STATUS PATTERN...: the checker on $tmp/NAME exits STATUS and
# prints every PATTERN (grep -E).
expect() {
  local name=$1 want=$2
  shift 2
  local out rc=0
  out=$("$checker" "$tmp/$name" 2>&1) || rc=$?
  if [[ $rc != "$want" ]]; then
    echo "FAIL $name: exit $rc, expected $want; output:"
    echo "$out"
    failures=$((failures + 1))
    return
  fi
  for pattern in "$@"; do
    if ! grep -Eq -- "$pattern" <<<"$out"; then
      echo "FAIL $name: no line matches '$pattern'; output:"
      echo "$out"
      failures=$((failures + 1))
      return
    fi
  done
  echo "ok $name"
}

good_tree "$tmp/good"
expect good 0

good_tree "$tmp/base-up"
printf '#include "offloadio/Error.h"\n#include "offloadio/io/Engine.h"\n' >>"$tmp/base-up/common/base/src/Error.cpp"
expect base-up 1 \
  'common/base/src/Error.cpp:3: includes "offloadio/io/Engine.h" of layer io from layer base: against the direction base < io < device'

good_tree "$tmp/io-up"
printf '#include "offloadio/Device.h"\n' >>"$tmp/io-up/common/io/include/offloadio/io/Engine.h"
expect io-up 1 \
  'common/io/include/offloadio/io/Engine.h:2: includes "offloadio/Device.h" of layer device from layer io'

good_tree "$tmp/plugin"
printf '#include "../../../plugin/x/Plugin.h"\n' >>"$tmp/plugin/common/device/src/CApi.cpp"
printf '#include "HostStream.h"\n' >>"$tmp/plugin/common/io/src/Engine.cpp"
expect plugin 1 \
  'common/device/src/CApi.cpp:3: includes "\.\./\.\./\.\./plugin/x/Plugin\.h": common/ \(layer device\) never includes plugin/' \
  'common/io/src/Engine.cpp:4: includes "HostStream\.h", which is no header of the framework'

good_tree "$tmp/public"
printf '#include "ompx_io.h"\n' >>"$tmp/public/common/io/src/Engine.cpp"
expect public 1 'common/io/src/Engine.cpp:4: includes the public header "ompx_io.h" from layer io'

good_tree "$tmp/unknown"
printf '#include "offloadio/Gone.h"\n' >>"$tmp/unknown/common/device/src/CApi.cpp"
expect unknown 1 'common/device/src/CApi.cpp:3: includes "offloadio/Gone.h", which no layer holds'

good_tree "$tmp/stray"
mkdir -p "$tmp/stray/common/include/offloadio"
echo '' >"$tmp/stray/common/include/offloadio/Old.h"
expect stray 1 'common/include/offloadio/Old.h: not in a layer'

good_tree "$tmp/device-io"
mkdir -p "$tmp/device-io/common/device/src"
printf '#include "offloadio/Device.h"\n#include "offloadio/io/Engine.h"\n' \
  >"$tmp/device-io/common/device/src/DeviceMemory.cpp"
expect device-io 1 \
  'common/device/src/DeviceMemory.cpp:2: includes "offloadio/io/Engine.h" of layer io from the device itself'

good_tree "$tmp/libompx"
printf '#include "offloadio/Device.h"\n' >>"$tmp/libompx/libompx_io/lib.cpp"
expect libompx 1 'libompx_io/lib.cpp:4: includes "offloadio/Device.h" of the framework from libompx_io'

expect missing 2

if ((failures)); then
  echo "$failures case(s) failed"
  exit 1
fi
