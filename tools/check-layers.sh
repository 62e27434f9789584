#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# check-layers.sh [ROOT]: fails on an include against the direction of the
# framework's layers (docs/testing.md, "The layer check"). ROOT is the source
# tree (default: this script's).
#
#   common/base < common/io < common/device
#
# A file of a layer may include the headers of its own layer and of the
# layers below it. Each header belongs to the layer whose include/ holds it
# (common/<layer>/include/offloadio/...). Besides:
#   - common/ includes no header of plugin/ or libompx_io/: its quoted
#     includes are offloadio/..., llvm/... or, in the device layer only, the
#     public headers of include/;
#   - every file of common/ sits in a layer (common/<layer>/{include,src}/);
#   - libompx_io/ includes of the framework only the LLVM-free headers listed
#     in LIBOMPX_IO_ALLOWED;
#   - the device itself (DEVICE_WITHOUT_IO: GenericDeviceTy's header and
#     sources) includes nothing of the file engine: it knows file transfers
#     only through DeviceIOServiceTy, which the plugin installs.
# Each violation is printed as FILE:LINE: and the two layers; the exit
# status is 1 if there is one, 2 on a usage error.
set -euo pipefail

root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
if [[ ! -d $root/common ]]; then
  echo "check-layers: $root has no common/" >&2
  exit 2
fi
cd "$root"

LAYERS=(base io device)
# The framework headers libompx_io may include: the extension ABI and the
# LLVM-free helpers it shares with the plugins.
LIBOMPX_IO_ALLOWED=(offloadio/ExtensionABI.h offloadio/ExtensionLookup.h
                    offloadio/StaticTLS.h
                    offloadio/LaunchRank.h offloadio/MessagePrefix.h
                    offloadio/Envar.h
                    offloadio/LastErrorStore.h offloadio/CreatorProcess.h
                    offloadio/io/SysCalls.h offloadio/io/FullTransfer.h
                    offloadio/io/IOPathNames.h
                    offloadio/io/TransferCheck.h)

# GenericDeviceTy's header and sources.
DEVICE_WITHOUT_IO=(common/device/include/offloadio/Device.h
                   common/device/src/Device.cpp common/device/src/DeviceMemory.cpp
                   common/device/src/DeviceTransfers.cpp)

# "HEADER LAYER RANK" lines for awk: offloadio/... of each layer.
map=$(for rank in "${!LAYERS[@]}"; do
  layer=${LAYERS[$rank]}
  [[ -d common/$layer/include ]] || continue
  (cd "common/$layer/include" && find offloadio -type f) |
    sed "s|\$| $layer $rank|"
done)
public=$( (cd include 2>/dev/null && find . -maxdepth 1 -type f -name '*.h*') |
  sed 's|^\./||; s|\.in$||' || true)

status=0
report() {
  echo "$1"
  status=1
}

# Files of common/ outside the layers.
while IFS= read -r f; do
  report "$f: not in a layer: framework files live in common/<layer>/{include,src}/ (${LAYERS[*]})"
done < <(find common -type f ! -name CMakeLists.txt | grep -Ev "^common/($(
  IFS='|'; echo "${LAYERS[*]}"))/(include|src)/" || true)

# Every quoted include of common/ against the map.
mapfile -t files < <(find common -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.def' \) | sort)
if ((${#files[@]})); then
  out=$(awk -v layers="${LAYERS[*]}" -v map="$map" -v public="$public" \
            -v noio="${DEVICE_WITHOUT_IO[*]}" '
    BEGIN {
      n = split(noio, d, " ")
      for (i = 1; i <= n; i++) NoIO[d[i]] = 1
      n = split(map, lines, "\n")
      for (i = 1; i <= n; i++) {
        split(lines[i], f, " ")
        if (f[1] != "") { Layer[f[1]] = f[2]; Rank[f[1]] = f[3] }
      }
      n = split(public, p, "\n")
      for (i = 1; i <= n; i++) if (p[i] != "") Public[p[i]] = 1
      n = split(layers, l, " ")
      for (i = 1; i <= n; i++) LayerRank[l[i]] = i - 1
      Order = l[1]
      for (i = 2; i <= n; i++) Order = Order " < " l[i]
    }
    FNR == 1 {
      split(FILENAME, parts, "/")
      Own = parts[2]
      OwnRank = LayerRank[Own]
    }
    /^[ \t]*#[ \t]*include[ \t]*"/ {
      inc = $0
      sub(/^[^"]*"/, "", inc)
      sub(/".*$/, "", inc)
      where = FILENAME ":" FNR ": "
      if (inc ~ /(^|\/)plugin\// || inc ~ /(^|\/)libompx_io\//) {
        print where "includes \"" inc "\": common/ (layer " Own ") never includes plugin/ or libompx_io/"
      } else if (inc ~ /^offloadio\//) {
        if (!(inc in Layer))
          print where "includes \"" inc "\", which no layer holds (common/<layer>/include/" inc ")"
        else if (Rank[inc] > OwnRank)
          print where "includes \"" inc "\" of layer " Layer[inc] " from layer " Own ": against the direction " Order
        else if ((FILENAME in NoIO) && inc ~ /^offloadio\/io\//)
          print where "includes \"" inc "\" of layer io from the device itself: GenericDeviceTy knows file transfers only through DeviceIOServiceTy (offloadio/DeviceIOService.h)"
      } else if (inc ~ /^llvm\//) {
      } else if (inc in Public) {
        if (Own != "device")
          print where "includes the public header \"" inc "\" from layer " Own ": only the device layer implements the public API"
      } else {
        print where "includes \"" inc "\", which is no header of the framework (offloadio/...), of LLVM or of include/: common/ (layer " Own ") includes nothing of plugin/ or libompx_io/"
      }
    }
  ' "${files[@]}")
  [[ -z $out ]] || report "$out"
fi

# libompx_io/: its own headers, the public ones and the allowed few.
if [[ -d libompx_io ]]; then
  mapfile -t files < <(find libompx_io -type f \( -name '*.h' -o -name '*.cpp' \) | sort)
  if ((${#files[@]})); then
    out=$(awk -v allowed="${LIBOMPX_IO_ALLOWED[*]}" '
      BEGIN { n = split(allowed, a, " "); for (i = 1; i <= n; i++) Allowed[a[i]] = 1 }
      /^[ \t]*#[ \t]*include[ \t]*"offloadio\// {
        inc = $0
        sub(/^[^"]*"/, "", inc)
        sub(/".*$/, "", inc)
        if (!(inc in Allowed))
          print FILENAME ":" FNR ": includes \"" inc "\" of the framework from libompx_io: only " allowed " may be (tools/check-layers.sh)"
      }
    ' "${files[@]}")
    [[ -z $out ]] || report "$out"
  fi
fi

if ((status)); then
  echo "check-layers: includes against the layers (docs/testing.md, \"The layer check\")" >&2
fi
exit $status
